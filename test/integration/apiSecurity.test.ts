// Regression tests for what an attacker and a new user found against the API (issue 7): the key
// walked around by path spellings, 500s from input, JSON sent as text/plain, no idempotency, no
// rate limit. Each of these failed on the code before the fix.
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../client/apiKeys.js';
import { AuthcapClient } from '../../client/authcapClient.js';
import { createApiServer, listen } from '../../api/server.js';
import { RateLimiter } from '../../api/rateLimit.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { api, dev, newOrderId, payer } from '../support/api.js';
import { stored } from '../support/lifecycle.js';
import { scratchDirs } from '../support/scratch.js';

const scratch = scratchDirs('api');

const p = payer(2);

/** A request with the target exactly as given (fetch would normalise dot segments away). */
function rawRequest(url: string, target: string, headers: Record<string, string> = {}, body = ''): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const lines = [
        `${body ? 'POST' : 'GET'} ${target} HTTP/1.1`,
        `Host: ${hostname}:${port}`,
        'Connection: close',
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
        ...(body ? [`Content-Length: ${Buffer.byteLength(body)}`] : []),
      ];
      socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
    });
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0), text: data.split('\r\n\r\n').slice(1).join('\r\n\r\n') }));
    socket.on('error', reject);
  });
}

const pathTricks = [
  '/./v1/authorizations',
  '/%2e/v1/authorizations',
  '/%2E/v1/authorizations',
  '/x/../v1/authorizations',
  '/healthz/../v1/authorizations',
  '/v1/./authorizations',
  '/v1//authorizations',
  '/v1/authorizations/%2e%2e',
  '//v1/authorizations',
  '/v1%2fauthorizations',
];

describe('the API key cannot be walked around', () => {
  it.each(pathTricks)('%s without a key is 401 (GET and POST)', async (target) => {
    for (const body of ['', JSON.stringify({ orderId: 'x', payer: p.address, amount: '1' })]) {
      const res = await rawRequest(dev().apiUrl, target, body ? { 'Content-Type': 'application/json' } : {}, body);
      expect(res.status, res.text).toBe(401);
      expect(JSON.parse(res.text).error.code).toBe('unauthorized');
    }
  });

  it.each(pathTricks)('%s with a key is refused 400, never routed', async (target) => {
    const res = await rawRequest(dev().apiUrl, target, { Authorization: `Bearer ${dev().apiKey}` });
    expect([400, 404]).toContain(res.status);
  });

  it('absolute-form targets are 401 without a key and 400 with one', async () => {
    const target = `${dev().apiUrl}/v1/authorizations`;
    expect((await rawRequest(dev().apiUrl, target)).status).toBe(401);
    expect((await rawRequest(dev().apiUrl, target, { Authorization: `Bearer ${dev().apiKey}` })).status).toBe(400);
  });

  it('every route but /healthz and /readyz needs a key; an unknown key is 401', async () => {
    const s = await stored(p, '0.1');
    const routes: [string, string][] = [
      ['GET', '/v1/authorizations'],
      ['GET', `/v1/authorizations/${s.id}`],
      ['POST', '/v1/authorizations'],
      ['POST', `/v1/authorizations/${s.id}/capture`],
      ['POST', `/v1/authorizations/${s.id}/void`],
      ['POST', `/v1/authorizations/${s.id}/cancel`],
      ['POST', `/v1/authorizations/${s.id}/signature`],
      ['GET', '/openapi.json'],
      ['GET', '/metrics'],
      ['GET', '/nope'],
    ];
    for (const [method, path] of routes) {
      for (const key of [null, 'ak_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'nonsense']) {
        const res = await api(method, path, method === 'POST' ? {} : undefined, { key });
        expect(res.status, `${method} ${path} with ${key}`).toBe(401);
      }
    }
    expect((await api('GET', '/healthz', undefined, { key: null })).status).toBe(200);
    expect([200, 503]).toContain((await api('GET', '/readyz', undefined, { key: null })).status);
    expect((await api('GET', `/v1/authorizations/${s.id}`)).body.state).toBe('stored');
  });
});

describe('input that once answered 500 is a clear 4xx that changes nothing', () => {
  it('void with a non-string `by` is 400', async () => {
    const s = await stored(p, '0.1');
    const res = await api('POST', `/v1/authorizations/${s.id}/void`, { reason: 'x', by: 42 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', details: { field: 'by' } });
    expect((await api('GET', `/v1/authorizations/${s.id}`)).body.state).toBe('stored');
  });

  it('a malformed percent-escape in the path is 400', async () => {
    const res = await rawRequest(dev().apiUrl, '/v1/authorizations/%E0%A4%A', { Authorization: `Bearer ${dev().apiKey}` });
    expect(res.status).toBe(400);
  });

  it.each([
    ['a lone surrogate', `order-\uD800-x`],
    ['a NUL byte', 'order-\u0000-x'],
    ['a newline', 'order\nx'],
    ['leading space', ' order'],
  ])('an orderId with %s is 400 and no workflow starts', async (_name, orderId) => {
    const res = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '1' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    const listed = await api('GET', `/v1/authorizations?payer=${p.address}&limit=100`);
    expect(listed.status).toBe(200);
  });

  it('unknown fields are refused with their name; JSON numbers and padded amounts are refused', async () => {
    const unknown = await api('POST', '/v1/authorizations', { orderId: newOrderId(), payer: p.address, amount: '1', tip: '5' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('tip');
    for (const amount of [1, ' 1.00 ', '1e3', '0.0000001', '0']) {
      const res = await api('POST', '/v1/authorizations', { orderId: newOrderId(), payer: p.address, amount });
      expect(res.status, String(amount)).toBe(400);
    }
  });

  it('the zero address, the token and the merchant are refused as payer', async () => {
    for (const payerAddress of ['0x0000000000000000000000000000000000000000', dev().tokenAddress, dev().merchantAddress]) {
      const res = await api('POST', '/v1/authorizations', { orderId: newOrderId(), payer: payerAddress, amount: '1' });
      expect(res.status, payerAddress).toBe(400);
      expect(res.body.error.message).toMatch(/payer cannot be/);
    }
  });

  it('JSON sent as text/plain is 415 (a browser could send that without a preflight)', async () => {
    const s = await stored(p, '0.1');
    const res = await api('POST', `/v1/authorizations/${s.id}/capture`, '{}', { headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
    expect((await api('GET', `/v1/authorizations/${s.id}`)).body.state).toBe('stored');
  });
});

describe('Idempotency-Key', () => {
  it('replays the first answer (even after the resource moved on), refuses reuse with another body', async () => {
    const key = `idem-${Date.now()}`;
    const body = { orderId: newOrderId('idem'), payer: p.address, amount: '0.2' };
    const first = await api('POST', '/v1/authorizations', body, { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    await api('POST', `/v1/authorizations/${first.body.id}/void`, { reason: 'moved on' });
    const again = await api('POST', '/v1/authorizations', body, { headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers?.get('idempotent-replayed')).toBe('true');
    const reused = await api('POST', '/v1/authorizations', { ...body, amount: '0.3' }, { headers: { 'idempotency-key': key } });
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
  });
});

describe('an API of its own: restart, rate limit, Temporal down', () => {
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

  async function serve(options: { rateLimiter?: RateLimiter; apiClient?: AuthcapClient } = {}) {
    const server = createApiServer({ client: options.apiClient ?? client, keys, idempotency: { dir: join(dir, 'idem') }, rateLimiter: options.rateLimiter });
    const url = await listen(server, 0);
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any, headers: res.headers };
    };
    return {
      call,
      close: () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    };
  }

  it('an Idempotency-Key answer survives an API restart (a new process on the same directory)', async () => {
    const body = { orderId: newOrderId('idem-restart'), payer: p.address, amount: '0.2' };
    const a = await serve();
    const first = await a.call('POST', '/v1/authorizations', body, { 'idempotency-key': 'restart-1' });
    expect(first.status).toBe(201);
    await a.close();
    const b = await serve();
    const again = await b.call('POST', '/v1/authorizations', body, { 'idempotency-key': 'restart-1' });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    await b.close();
  });

  it('a key over its rate answers 429 with Retry-After', async () => {
    const api2 = await serve({ rateLimiter: new RateLimiter(1, 2) });
    const answers = await Promise.all(Array.from({ length: 5 }, () => api2.call('GET', '/v1/authorizations?limit=1')));
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.body.error.code).toBe('rate_limited');
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    await api2.close();
  });

  it('with Temporal unreachable, answers 503 temporal_unavailable with Retry-After within 5 s', async () => {
    // A client whose server is gone: connect through a proxy, then cut it.
    const { createServer } = await import('node:net');
    const [host, port] = dev().temporalAddress.split(':');
    const sockets = new Set<import('node:net').Socket>();
    const proxy = createServer((inbound) => {
      const outbound = connect(Number(port), host);
      sockets.add(inbound).add(outbound);
      inbound.pipe(outbound).pipe(inbound);
      inbound.on('error', () => outbound.destroy());
      outbound.on('error', () => inbound.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const proxied = await AuthcapClient.connect(
      loadTemporalSettings({ address: `127.0.0.1:${(proxy.address() as { port: number }).port}`, namespace: dev().temporalNamespace }),
    );
    const s = await stored(p, '0.1');
    const api3 = await serve({ apiClient: proxied });
    expect((await api3.call('GET', `/v1/authorizations/${s.id}`)).status).toBe(200);
    proxy.close();
    for (const socket of sockets) socket.destroy();
    for (const [method, path, body] of [
      ['GET', `/v1/authorizations/${s.id}`],
      ['POST', `/v1/authorizations/${s.id}/capture`, {}],
      ['GET', '/v1/authorizations'],
    ] as const) {
      const started = Date.now();
      const res = await api3.call(method, path, body);
      expect(Date.now() - started, `${method} ${path}`).toBeLessThan(5_000);
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.error.code).toBe('temporal_unavailable');
      expect(res.headers.get('retry-after')).toBeTruthy();
    }
    await api3.close();
    await proxied.close().catch(() => undefined);
    // Nothing moved: the authorization is still stored.
    expect((await api('GET', `/v1/authorizations/${s.id}`)).body.state).toBe('stored');
  }, 30_000);
});

describe('what the API tells about itself', () => {
  it('serves an OpenAPI 3.1 document with every route, generated from the schemas', async () => {
    const res = await api('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const path of [
      '/v1/authorizations',
      '/v1/authorizations/{id}',
      '/v1/authorizations/{id}/capture',
      '/v1/authorizations/{id}/cancel',
      '/v1/authorizations/{id}/void',
      '/v1/authorizations/{id}/signature',
      '/healthz',
      '/readyz',
      '/metrics',
    ]) {
      expect(Object.keys(res.body.paths), path).toContain(path);
    }
    const create = res.body.paths['/v1/authorizations'].post.requestBody.content['application/json'].schema;
    expect(JSON.stringify(create)).toContain('"additionalProperties":false');
    expect(JSON.stringify(create)).toContain('orderId');
  });

  it('exposes Prometheus metrics: HTTP requests, transitions, capture latency, JSON-RPC calls', async () => {
    const s = await stored(p, '0.12');
    await api('POST', `/v1/authorizations/${s.id}/capture`);
    const res = await fetch(`${dev().apiUrl}/metrics`, { headers: { authorization: `Bearer ${dev().operatorApiKey}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    // The suite's worker runs in the API's process, so one registry shows both.
    for (const name of [
      'authcap_http_requests_total',
      'authcap_authorization_transitions_total',
      'authcap_capture_seconds_bucket',
      'authcap_rpc_calls_total',
      'authcap_authorizations',
    ]) {
      expect(text, name).toContain(name);
    }
    expect(text).toMatch(/authcap_authorization_transitions_total\{network="eip155:\d+",from="capturing",to="captured"\} [1-9]/);
  });
});
