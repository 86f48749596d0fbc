import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ApiKeyStore } from '../../client/apiKeys.js';
import { AuthcapClient } from '../../client/authcapClient.js';
import { createApiServer, listen } from '../../api/server.js';
import { errorCodes } from '../../domain/errors.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { dev, payer, tokenBalance } from '../support/api.js';
import { stored } from '../support/lifecycle.js';
import { expectNoMerchantTransactionFor, markMerchant } from '../support/sideEffects.js';
import { connectTemporal } from '../support/temporal.js';
import { scratchDirs } from '../support/scratch.js';

const scratch = scratchDirs('fuzz');

const RUNS = 10_000;
const p = payer(4);

const oddString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', '\uD800', '\uDFFF', '𝔞', '‮', '../', '%2e%2e', '0x', '1e309', '-1', 'NaN', 'null', `0x${'f'.repeat(4000)}`),
);
const oddJson = fc.oneof(fc.jsonValue({ maxDepth: 3 }), oddString, fc.integer(), fc.double(), fc.constant(null), fc.boolean());
const fuzzOrderId = oddString.map((s) => `fz${s}\u0001`);
/** Percent-encodes what can be; a lone surrogate becomes a malformed UTF-8 escape, itself a good input. */
const enc = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return s
      .replace(/[\uD800-\uDFFF]/g, '%ED%A0%80')
      .replace(/[^A-Za-z0-9%_.~-]/g, (c) => (c.charCodeAt(0) < 128 ? `%${c.charCodeAt(0).toString(16).padStart(2, '0')}` : 'x'));
  }
};

describe('fuzzing the API with malformed requests', () => {
  let client: AuthcapClient;
  let url: string;
  let close: () => Promise<void>;
  let key: string;
  let operatorKey: string;
  let existingId: string;

  beforeAll(async () => {
    const dir = scratch();
    const keys = ApiKeyStore.open(join(dir, 'keys.json'));
    key = keys.create('order-service', 'fuzz').key;
    operatorKey = keys.create('operator', 'fuzz').key;
    client = await AuthcapClient.connect(loadTemporalSettings({ address: dev().temporalAddress, namespace: dev().temporalNamespace }));
    const server = createApiServer({
      client,
      keys,
      idempotency: { dir: join(dir, 'idem') },
      forbiddenPayers: [
        { address: dev().tokenAddress, why: 'the token contract' },
        { address: dev().merchantAddress, why: 'the merchant itself' },
      ],
    });
    url = await listen(server, 0);
    close = () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      });
    existingId = (await stored(p, '0.11')).id;
  });
  afterAll(async () => {
    await close?.();
    await client?.close();
  });

  it(`answers ${RUNS} malformed requests with 4xx and a stable code, and changes nothing`, async () => {
    const balanceBefore = await tokenBalance(p.address);
    const mark = await markMerchant();
    const startedAt = new Date();
    const ids = fc.oneof(fc.constant(existingId), oddString, fc.constant(`${existingId}x`), fc.constant('auth_AAAA.00000000-0000-0000-0000-000000000000'));
    const path = fc.oneof(
      fc.constantFrom('/v1/authorizations', '/v1/authorizations/', '/openapi.json', '/v1', '/', '/v2/authorizations', '/v1/authorizations/x/y/z'),
      ids.map((id) => `/v1/authorizations/${enc(id)}`),
      fc.tuple(ids, fc.constantFrom('signature', 'capture', 'cancel', 'void', 'refund', '')).map(([id, action]) => `/v1/authorizations/${enc(id)}/${action}`),
      oddString.map((s) => `/v1/authorizations?${enc(s)}`),
      fc
        .tuple(fc.constantFrom('orderId', 'state', 'payer', 'limit', 'pageToken', 'junk'), oddString)
        .map(([k, v]) => `/v1/authorizations?${k}=${enc(v)}&limit=0`),
      fc.constantFrom(
        '/./v1/authorizations',
        '/%2e/v1/authorizations',
        '/v1/%E0%A4%A',
        '/v1/authorizations/%ZZ',
        '/v1//authorizations',
        '/v1/authorizations/..',
      ),
    );
    const invalidCreate = fc.oneof(
      fc.record({ orderId: fuzzOrderId, payer: oddJson, amount: oddJson, validForSeconds: oddJson }, { requiredKeys: [] }),
      fc.record({
        orderId: fuzzOrderId,
        payer: fc.constant(p.address),
        amount: fc.oneof(
          fc.integer(),
          fc.double(),
          oddString.map((s) => ` ${s}1.0000001`),
        ),
      }),
      fc.record({ orderId: fc.constant('fz-valid-order'), payer: fc.constant(p.address), amount: fc.constant('1'), extra: oddJson }),
      fc.record({ orderId: fuzzOrderId, primaryType: oddJson, authorization: oddJson, signature: oddJson, domain: oddJson }, { requiredKeys: [] }),
      fc.record({
        orderId: fc.constant('fz-presigned'),
        primaryType: fc.constant('ReceiveWithAuthorization'),
        authorization: fc.record({ from: oddJson, to: oddJson, value: oddJson, validAfter: oddJson, validBefore: oddJson, nonce: oddJson }),
        signature: fc.constant(`0x${'ab'.repeat(65)}`),
      }),
      oddJson,
    );
    const body = fc.oneof(
      invalidCreate,
      fc.record({ signature: oddJson }, { requiredKeys: [] }),
      fc
        .record({ reason: oddJson, by: oddJson }, { requiredKeys: [] })
        .filter((b) => typeof b.reason !== 'string' || !b.reason.trim() || (b.by !== undefined && (typeof b.by !== 'string' || !b.by.trim()))),
      fc.dictionary(oddString, oddJson, { maxKeys: 4 }).filter((d) => Object.keys(d).length > 0),
    );
    // `{}` is the one valid capture body: never sent, so no fuzzed request can capture.
    const isEmptyObject = (b: unknown) => typeof b === 'object' && b !== null && !Array.isArray(b) && Object.keys(b).length === 0;
    const request = fc.record({
      method: fc.constantFrom('GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH'),
      path,
      body: body.filter((b) => !isEmptyObject(b)),
      contentType: fc.constantFrom(
        'application/json',
        'application/json',
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/json; charset=utf-8',
      ),
      auth: fc.constantFrom('order', 'order', 'order', 'operator', 'none', 'bogus'),
      idempotencyKey: fc.option(oddString, { nil: undefined }),
      rawBody: fc.option(fc.constantFrom('{', '[1,2', '"unterminated', '{"a":1}}', '\u0000'), { nil: undefined }),
    });

    const samples = fc.sample(request, { numRuns: RUNS, seed: 20261122 });
    const problems: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < samples.length) {
        const r = samples[next++]!;
        const headers: Record<string, string> = { 'content-type': r.contentType };
        if (r.auth === 'order') headers.authorization = `Bearer ${key}`;
        if (r.auth === 'operator') headers.authorization = `Bearer ${operatorKey}`;
        if (r.auth === 'bogus') headers.authorization = 'Bearer ak_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
        if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey.replace(/[^\x20-\x7E]/g, '?');
        let text: string;
        let status: number;
        try {
          const res = await fetch(`${url}${r.path}`, {
            method: r.method,
            headers,
            body: r.method === 'GET' ? undefined : (r.rawBody ?? JSON.stringify(r.body)),
          });
          status = res.status;
          text = await res.text();
        } catch {
          // A request fetch itself refuses to send (an invalid header or URL) never reached the API.
          continue;
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        let code: unknown;
        try {
          code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
        } catch {
          code = undefined;
        }
        const acceptable = status >= 400 && status < 500 && typeof code === 'string' && Object.hasOwn(errorCodes, code);
        // Reads of the existing authorization or lists are fine answers too (200), as long as nothing moved.
        const harmlessRead = r.method === 'GET' && status === 200;
        if (!acceptable && !harmlessRead) problems.push(`${r.method} ${r.path.slice(0, 80)} → ${status} ${text.slice(0, 160)}`);
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    expect(problems.slice(0, 20)).toEqual([]);
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);

    // Nothing changed: no workflow for a fuzzed order, the existing authorization as it was, no money moved.
    const temporal = await connectTemporal();
    const started: string[] = [];
    for await (const execution of temporal.workflow.list({
      query: `WorkflowType = 'authorizationWorkflow' AND StartTime >= '${startedAt.toISOString()}' AND OrderId STARTS_WITH 'fz'`,
    }))
      started.push(execution.workflowId);
    expect(started).toEqual([]);
    expect((await client.authorizations.get(existingId)).state).toBe('stored');
    expect(await tokenBalance(p.address)).toBe(balanceBefore);
    await expectNoMerchantTransactionFor(mark, p.address);
    await temporal.connection.close();
  }, 300_000);
});
