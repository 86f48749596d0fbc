// The payer's checkout routes (issue 10): public, opened only by the one-authorization link token,
// which is stateless (an HMAC of the id), compared in constant time and good for nothing on /v1.
// The pages themselves are driven in a real browser by test/browser/.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ApiKeyStore } from '../../client/apiKeys.js';
import { AuthcapClient } from '../../client/authcapClient.js';
import { CheckoutLinks, checkoutSecret } from '../../runtime/checkoutLinks.js';
import { readVariable } from '../../runtime/settings/read.js';
import { createApiServer, listen } from '../../api/server.js';
import { RateLimiter } from '../../api/rateLimit.js';
import { errorCodes } from '../../domain/errors.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { api, dev, payer, walletSign } from '../support/api.js';
import { draft, stored, waitForState } from '../support/lifecycle.js';
import { scratchDirs } from '../support/scratch.js';

const scratch = scratchDirs('checkout');

const p = payer(11);
const SECRET = Buffer.alloc(32, 7);

/** A request to a public route: no API key unless one is given. */
async function open(url: string, init: RequestInit = {}): Promise<{ status: number; body: any; text: string; headers: Headers }> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // HTML or script
  }
  return { status: res.status, body, text, headers: res.headers };
}

const post = (url: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  open(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

/** checkoutUrl → the session, signature and cancel URLs of the same link. */
function routesOf(checkoutUrl: string) {
  const url = new URL(checkoutUrl);
  const at = (tail: string) => `${url.origin}${url.pathname}${tail}${url.search}`;
  return {
    page: checkoutUrl,
    cancelPage: at('/cancel'),
    session: at('/session'),
    signature: at('/signature'),
    cancel: at('/cancel'),
    token: url.searchParams.get('token')!,
  };
}

describe('link tokens', () => {
  const links = new CheckoutLinks(SECRET);
  const id = 'auth_b3JkZXItMQ.0b0c6a46-6a52-4d0e-9f43-0a4c4b6c2d1e';

  it('accept the token of this id only: not another id, not a tampered, truncated or differently spelled one', () => {
    const token = links.tokenFor(id);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(links.verify(id, token)).toBe(true);
    expect(links.verify(`${id}x`, token)).toBe(false);
    expect(links.verify(id, links.tokenFor('auth_other.0b0c6a46-6a52-4d0e-9f43-0a4c4b6c2d1e'))).toBe(false);
    for (let i = 0; i < token.length; i += 1) {
      // Every single-character change is refused, the last character's spare bits included.
      const tampered = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
      expect(links.verify(id, tampered), `changed at ${i}`).toBe(false);
    }
    expect(links.verify(id, token.slice(0, -1))).toBe(false);
    expect(links.verify(id, `${token}=`)).toBe(false);
    expect(links.verify(id, Buffer.from(token, 'base64url').toString('base64'))).toBe(false);
    for (const wrong of [undefined, null, '', 42, [token], 'x'.repeat(43)]) expect(links.verify(id, wrong)).toBe(false);
  });

  it('depend on the secret', () => {
    expect(new CheckoutLinks(Buffer.alloc(32, 8)).verify(id, links.tokenFor(id))).toBe(false);
    expect(() => new CheckoutLinks(Buffer.alloc(16))).toThrow(/32 bytes/);
  });

  it('take the secret given (AUTHCAP_CHECKOUT_SECRET, read at the entry), else a 0600 file in the state dir, the same on every read', () => {
    const fromSettings = readVariable('AUTHCAP_CHECKOUT_SECRET', { AUTHCAP_CHECKOUT_SECRET: 's'.repeat(32) });
    expect(checkoutSecret({ secret: fromSettings })).toEqual(Buffer.from('s'.repeat(32)));
    expect(() => readVariable('AUTHCAP_CHECKOUT_SECRET', { AUTHCAP_CHECKOUT_SECRET: 'short' })).toThrow(/at least 32/);
    const dir = join(scratch(), 'state');
    const first = checkoutSecret({ stateDir: dir });
    expect(first.length).toBe(32);
    expect(statSync(join(dir, 'checkout-secret')).mode & 0o777).toBe(0o600);
    expect(checkoutSecret({ stateDir: dir })).toEqual(first);
    // Unset (undefined or empty): the file.
    expect(checkoutSecret({ secret: '', stateDir: dir })).toEqual(first);
    // Without a state dir: a secret for this process only, never a fixed one.
    expect(checkoutSecret({})).not.toEqual(checkoutSecret({}));
  });
});

describe('the resource carries the payer links', () => {
  it('checkoutUrl while drafted, cancelUrl while stored, neither once final; the same link on every read', async () => {
    const d = await draft(p, '1.25');
    expect(d.checkoutUrl).toMatch(new RegExp(`^${dev().apiUrl}/checkout/${d.id.replace(/\./g, '\\.')}\\?token=[A-Za-z0-9_-]{43}$`));
    expect(d.cancelUrl).toBeNull();
    expect((await api('GET', `/v1/authorizations/${d.id}`)).body.checkoutUrl).toBe(d.checkoutUrl);
    const voided = await api('POST', `/v1/authorizations/${d.id}/void`, { reason: 'test' });
    expect(voided.body).toMatchObject({ state: 'voided', checkoutUrl: null, cancelUrl: null });

    const s = await stored(p, '1.5');
    expect(s.checkoutUrl).toBeNull();
    expect(s.cancelUrl).toMatch(new RegExp(`^${dev().apiUrl}/checkout/${s.id.replace(/\./g, '\\.')}/cancel\\?token=[A-Za-z0-9_-]{43}$`));
    await api('POST', `/v1/authorizations/${s.id}/void`, { reason: 'test cleanup' });
  });
});

describe('public checkout routes', () => {
  it('serve the page without a key, with a strict CSP, no framing and no referrer; the script is served by the API itself', async () => {
    const d = await draft(p, '2');
    const r = routesOf(d.checkoutUrl);
    for (const url of [r.page, r.cancelPage]) {
      const page = await open(url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'; style-src 'self'/);
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      expect(page.text).not.toMatch(/<script>|style=|<style/);
      const script = /<script type="module" src="([^"]+)"/.exec(page.text)![1]!;
      expect(script).toMatch(/^\/checkout-assets\/(page|cancel)-[A-Z0-9]+\.js$/);
      const asset = await open(`${dev().apiUrl}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(asset.text).toContain('eth_signTypedData_v4');
      const etag = asset.headers.get('etag')!;
      expect((await open(`${dev().apiUrl}${script}`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    }
    expect((await open(`${dev().apiUrl}/checkout-assets/nope.js`)).status).toBe(404);
    await api('POST', `/v1/authorizations/${d.id}/void`, { reason: 'test cleanup' });
  });

  it('the session tells the payer what they sign, never the signature or a key', async () => {
    const d = await draft(p, '12.5');
    const session = await open(routesOf(d.checkoutUrl).session);
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({
      id: d.id,
      orderId: d.orderId,
      state: 'drafted',
      payer: p.address,
      merchant: { address: dev().merchantAddress, name: expect.any(String) },
      token: { address: dev().tokenAddress, symbol: 'USDC', decimals: 6, chainId: dev().chainId },
      amountMinor: '12500000',
      validAfter: d.authorization.validAfter,
      validBefore: d.authorization.validBefore,
      cancellationTypedData: null,
      capture: null,
      lastError: null,
    });
    expect(session.body.typedData).toEqual(d.typedData);
    expect(Math.abs(session.body.now - Date.now() / 1000)).toBeLessThan(30);
    const s = await stored(p, '0.3');
    const storedSession = await open(routesOf(s.cancelUrl.replace('/cancel?', '?')).session);
    expect(storedSession.body).toMatchObject({ state: 'stored', typedData: null });
    expect(storedSession.body.cancellationTypedData).toEqual(s.cancellationTypedData);
    expect(JSON.stringify(storedSession.body)).not.toMatch(/signature"|apiKey|ak_/);
    for (const id of [d.id, s.id]) await api('POST', `/v1/authorizations/${id}/void`, { reason: 'test cleanup' });
  });

  it('a missing, wrong or borrowed token is 404 not_found everywhere, as for an authorization that does not exist', async () => {
    const [a, b] = [await draft(p, '0.5'), await draft(payer(12), '0.5')];
    const ra = routesOf(a.checkoutUrl);
    const rb = routesOf(b.checkoutUrl);
    const signature = walletSign(a.typedData, p.privateKey);
    const wrongs = [
      (u: string) => u.replace(/\?token=.*/, ''),
      (u: string) => u.replace(ra.token, `${ra.token.slice(0, -1)}${ra.token.endsWith('A') ? 'B' : 'A'}`),
      (u: string) => u.replace(ra.token, rb.token),
      // Another id (its last hex digit changed) with a's token.
      (u: string) => u.replace(a.id, `${a.id.slice(0, -1)}${a.id.endsWith('0') ? '1' : '0'}`),
    ];
    for (const wrong of wrongs) {
      for (const res of [await open(wrong(ra.session)), await post(wrong(ra.signature), { signature }), await post(wrong(ra.cancel), { signature })]) {
        expect(res.status, res.text).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
      const page = await open(wrong(ra.page));
      expect(page.status).toBe(404);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.text).toContain('This link is not valid');
    }
    expect((await api('GET', `/v1/authorizations/${a.id}`)).body.state).toBe('drafted');
    for (const id of [a.id, b.id]) await api('POST', `/v1/authorizations/${id}/void`, { reason: 'test cleanup' });
  });

  it('the token is no API key: it cannot read, capture, void or list on /v1', async () => {
    const s = await stored(p, '0.4');
    const token = new URL(s.cancelUrl).searchParams.get('token')!;
    const attempts: [string, string, unknown?][] = [
      ['GET', `/v1/authorizations/${s.id}`],
      ['GET', '/v1/authorizations'],
      ['POST', `/v1/authorizations/${s.id}/capture`, {}],
      ['POST', `/v1/authorizations/${s.id}/void`, { reason: 'x' }],
      ['GET', '/openapi.json'],
      ['GET', '/metrics'],
    ];
    for (const [method, path, body] of attempts) {
      for (const res of [await api(method, path, body, { key: token }), await api(method, `${path}?token=${token}`, body, { key: null })])
        expect(res.status, `${method} ${path}`).toBe(401);
    }
    // Nor does it reach another route below /checkout.
    expect(
      (await open(`${dev().apiUrl}/checkout/${s.id}/capture?token=${token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
        .status,
    ).toBe(401);
    expect((await api('GET', `/v1/authorizations/${s.id}`)).body.state).toBe('stored');
    await api('POST', `/v1/authorizations/${s.id}/void`, { reason: 'test cleanup' });
  });

  it('POST bodies are JSON only (415 otherwise) and checked by the same schemas; unknown query fields are 400', async () => {
    const d = await draft(p, '0.6');
    const r = routesOf(d.checkoutUrl);
    const signature = walletSign(d.typedData, p.privateKey);
    const plain = await post(r.signature, JSON.stringify({ signature }), { 'content-type': 'text/plain' });
    expect(plain.status).toBe(415);
    expect(plain.body.error.code).toBe('unsupported_media_type');
    const form = await post(r.signature, `signature=${signature}`, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    const extra = await post(r.signature, { signature, tip: 1 });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toContain('tip');
    const query = await open(`${r.session}&x=1`);
    expect(query.status).toBe(400);
    expect((await api('GET', `/v1/authorizations/${d.id}`)).body.state).toBe('drafted');
    await api('POST', `/v1/authorizations/${d.id}/void`, { reason: 'test cleanup' });
  });

  it('signs once while drafted, then cancels once while stored; the second of each is refused', async () => {
    const d = await draft(p, '0.7');
    const r = routesOf(d.checkoutUrl);
    const wrongSigner = await post(r.signature, { signature: walletSign(d.typedData, payer(12).privateKey) });
    expect(wrongSigner.status).toBe(422);
    expect(wrongSigner.body.error.code).toBe('invalid_signature');
    const signed = await post(r.signature, { signature: walletSign(d.typedData, p.privateKey) });
    expect(signed.status, signed.text).toBe(200);
    expect(signed.body).toMatchObject({ state: 'stored', typedData: null });
    const again = await post(r.signature, { signature: walletSign(d.typedData, p.privateKey) });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('invalid_state');

    const resource = (await api('GET', `/v1/authorizations/${d.id}`)).body;
    expect(resource.cancelUrl).toBe(r.cancelPage);
    const canceled = await post(r.cancel, { signature: walletSign(resource.cancellationTypedData, p.privateKey) });
    expect([200, 202], canceled.text).toContain(canceled.status);
    const final = await waitForState(d.id, 'canceled');
    expect(final.cancellation.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(final.history.at(-1)).toMatchObject({ state: 'canceled' });
    const twice = await post(r.cancel, { signature: walletSign(resource.cancellationTypedData, p.privateKey) });
    expect(twice.status).toBe(409);
    expect((await open(r.session)).body).toMatchObject({ state: 'canceled', cancellation: { transactionHash: final.cancellation.transactionHash } });
  });

  it('the OpenAPI document lists the checkout routes as public', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    for (const [path, method] of [
      ['/checkout/{id}', 'get'],
      ['/checkout/{id}/session', 'get'],
      ['/checkout/{id}/signature', 'post'],
      ['/checkout/{id}/cancel', 'post'],
    ] as const) {
      expect(doc.paths[path]?.[method]?.security, `${method} ${path}`).toEqual([]);
    }
  });
});

describe('an API of its own: public URL, rate limit', () => {
  let dir: string;
  let client: AuthcapClient;
  let keys: ApiKeyStore;
  let key: string;
  beforeAll(async () => {
    dir = scratch();
    keys = ApiKeyStore.open(join(dir, 'keys.json'));
    key = keys.create('order-service', 'test').key;
    client = await AuthcapClient.connect(loadTemporalSettings({ address: dev().temporalAddress, namespace: dev().temporalNamespace }));
  });
  afterAll(() => client?.close());

  async function serve(options: Partial<Parameters<typeof createApiServer>[0]> = {}) {
    const server = createApiServer({ client, keys, idempotency: { dir: join(dir, 'idem') }, rpcUrl: dev().rpcUrl, checkout: { secret: SECRET }, ...options });
    const url = await listen(server, 0);
    return {
      url,
      close: () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    };
  }

  it('links use AUTHCAP_PUBLIC_URL (with its path) when set; the page links its assets under that path', async () => {
    const own = await serve({ checkout: { secret: SECRET, publicUrl: 'https://pay.example.com/shop/', merchantName: 'Example Shop' } });
    const d = await draft(p, '0.8');
    const res = await fetch(`${own.url}/v1/authorizations/${d.id}`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await res.json()) as any;
    const token = new CheckoutLinks(SECRET).tokenFor(d.id);
    expect(body.checkoutUrl).toBe(`https://pay.example.com/shop/checkout/${d.id}?token=${token}`);
    const page = await open(`${own.url}/checkout/${d.id}?token=${token}`);
    expect(page.text).toMatch(/src="\/shop\/checkout-assets\/page-[A-Z0-9]+\.js"/);
    expect((await open(`${own.url}/checkout/${d.id}/session?token=${token}`)).body.merchant.name).toBe('Example Shop');
    // Another secret, another token: the shared API's link is not valid here.
    expect((await open(`${own.url}${new URL(d.checkoutUrl).pathname}${new URL(d.checkoutUrl).search}`)).status).toBe(404);
    await own.close();
    await api('POST', `/v1/authorizations/${d.id}/void`, { reason: 'test cleanup' });
  });

  it('public routes are rate limited per client address (429 with Retry-After), the probes never', async () => {
    const own = await serve({ publicRateLimiter: new RateLimiter(1, 2) });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => open(`${own.url}/checkout/auth_x.00000000-0000-0000-0000-000000000000/session?token=${'A'.repeat(43)}`)),
    );
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.body.error.code).toBe('rate_limited');
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(answers.filter((a) => a.status === 404).length).toBeGreaterThan(0);
    // The probes are never throttled: a limited liveness probe would get a healthy API restarted.
    for (let i = 0; i < 5; i += 1) expect((await open(`${own.url}/healthz`)).status).toBe(200);
    await own.close();
  });

  it('fuzzed requests to the public routes get a 4xx with a stable code (or a harmless read) and sign nothing', async () => {
    const own = await serve({ publicRateLimiter: new RateLimiter(10_000) });
    const d = await draft(p, '0.9');
    const token = new CheckoutLinks(SECRET).tokenFor(d.id);
    const odd = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 30 }),
      fc.constantFrom('', '\u0000', '\uD800', '../', '%2e%2e', 'A'.repeat(43), `${token}x`, token.toLowerCase()),
    );
    const enc = (text: string) => encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, '?'));
    const request = fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
      id: fc.oneof(fc.constant(d.id), odd),
      tail: fc.constantFrom('', '/session', '/signature', '/cancel', '/capture', '/void', '/x'),
      token: fc.oneof(fc.constant(token), odd),
      query: fc.constantFrom('', '&x=1', '&token=again'),
      contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
      // Never a valid signature of the payer: nothing fuzzed may sign.
      body: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.record({ signature: fc.oneof(odd, fc.constant(`0x${'ab'.repeat(65)}`)) })),
    });
    const problems: string[] = [];
    for (const r of fc.sample(request, { numRuns: 400, seed: 20261123 })) {
      const res = await fetch(`${own.url}/checkout/${enc(r.id)}${r.tail}?token=${enc(r.token)}${r.query}`, {
        method: r.method,
        headers: { 'content-type': r.contentType },
        body: r.method === 'GET' ? undefined : JSON.stringify(r.body),
      });
      const text = await res.text();
      let code: unknown;
      try {
        code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
      } catch {
        code = undefined;
      }
      const html = (res.headers.get('content-type') ?? '').startsWith('text/html');
      const refused = res.status >= 400 && res.status < 500 && (html ? res.status === 404 : typeof code === 'string' && Object.hasOwn(errorCodes, code));
      if (!refused && !(r.method === 'GET' && res.status === 200)) problems.push(`${r.method} …${r.tail} → ${res.status} ${text.slice(0, 120)}`);
    }
    expect(problems).toEqual([]);
    expect((await api('GET', `/v1/authorizations/${d.id}`)).body.state).toBe('drafted');
    await own.close();
    await api('POST', `/v1/authorizations/${d.id}/void`, { reason: 'test cleanup' });
  }, 120_000);
});
