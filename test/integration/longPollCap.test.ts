// Long polls are bounded and shared: an API of this file's own, with small caps on open waits
// (AUTHCAP_MAX_WAITS_PER_KEY / AUTHCAP_MAX_WAITS, here 3 per key and 5 for the process), takes more
// waits than that from two read-only operator keys. The excess is 429 `rate_limited` with
// Retry-After, no wait is 503, the open ones answer as soon as the payer signs, and an order service
// on the same API still creates, signs and captures meanwhile.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiServer, listen } from '../../api/server.js';
import { WaitLimits } from '../../api/waitLimits.js';
import { ApiKeyStore } from '../../client/apiKeys.js';
import { AuthcapClient } from '../../client/authcapClient.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { dev, newOrderId, payer, readApiResult, walletSign, type ApiResult } from '../support/api.js';

const p = payer(14);
const limits = new WaitLimits({ perKey: 3, perProcess: 5 });

let dir: string;
let server: Server;
let client: AuthcapClient;
let url: string;
const keys = { orderService: '', prober: '', otherProber: '' };

async function call(key: string, method: string, path: string, body?: unknown): Promise<ApiResult> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return readApiResult(res);
}

async function draft(amount: string): Promise<{ id: string; typedData: unknown }> {
  const res = await call(keys.orderService, 'POST', '/v1/authorizations', { orderId: newOrderId('cap'), payer: p.address, amount });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function sign(drafted: { id: string; typedData: unknown }): Promise<void> {
  const res = await call(keys.orderService, 'POST', `/v1/authorizations/${drafted.id}/signature`, { signature: walletSign(drafted.typedData, p.privateKey) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** Opens a wait and resolves once the API has either refused it or counts it among its open waits. */
async function openWait(key: string, id: string, keyId: string): Promise<{ answer: Promise<ApiResult> }> {
  const before = limits.open(keyId);
  const answer = call(key, 'GET', `/v1/authorizations/${id}?wait=30`);
  let refused = false;
  void answer.then((a) => {
    refused = a.status !== 200;
  });
  await vi.waitFor(() => expect(refused || limits.open(keyId) > before).toBe(true), { timeout: 10_000, interval: 20 });
  return { answer };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'authcap-longpoll-'));
  const store = ApiKeyStore.open(join(dir, 'keys.json'));
  keys.orderService = store.create('order-service', 'orders').key;
  keys.prober = store.create('operator', 'prober').key;
  keys.otherProber = store.create('operator', 'other prober').key;
  client = await AuthcapClient.connect(loadTemporalSettings({ address: dev().temporalAddress, namespace: dev().temporalNamespace }));
  server = createApiServer({ client, keys: store, idempotency: { dir: join(dir, 'idem') }, waitLimits: limits });
  url = await listen(server, 0);
});

afterAll(async () => {
  await new Promise<void>((resolve) => {
    server?.closeAllConnections();
    server?.close(() => resolve());
  });
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The key id of an `ak_<id>_<secret>` key: what the caps count by. */
const idOf = (key: string) => key.split('_')[1]!;

describe('open waits past the caps', () => {
  it('answers the excess 429 with Retry-After, never 503, and the rest as soon as the state changes', async () => {
    const [first, second] = [await draft('0.41'), await draft('0.42')];
    // Four waits from one key (its cap is 3), then three from another (the process's cap is 5).
    const waits: Promise<ApiResult>[] = [];
    for (let i = 0; i < 4; i++) waits.push((await openWait(keys.prober, first.id, idOf(keys.prober))).answer);
    for (const id of [second.id, second.id, first.id]) waits.push((await openWait(keys.otherProber, id, idOf(keys.otherProber))).answer);
    expect(limits.open()).toBe(5);

    // Meanwhile an order service on the same API: create, sign, capture.
    const lifecycle = (async () => {
      const drafted = await draft('0.43');
      await sign(drafted);
      let captured = await call(keys.orderService, 'POST', `/v1/authorizations/${drafted.id}/capture`, {});
      expect([200, 202], JSON.stringify(captured.body)).toContain(captured.status);
      // Past the API's own wait (202) it reads until captured: its own long poll would count against a full process.
      await vi.waitFor(
        async () => {
          if (captured.body.state !== 'captured') captured = await call(keys.orderService, 'GET', `/v1/authorizations/${drafted.id}`);
          expect(captured.body.state).toBe('captured');
        },
        { timeout: 60_000, interval: 250 },
      );
      return captured.body;
    })();
    // The payer signs both: every open wait answers with the change.
    await sign(first);
    await sign(second);

    const answers = await Promise.all(waits);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(refused.body.error.code).toBe('rate_limited');
      expect(refused.body.error.message).toMatch(/waits open \(at most [35]\)/);
      expect(Number(refused.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    for (const answered of answers.filter((a) => a.status === 200)) expect(answered.body.state).toBe('stored');

    const captured = await lifecycle;
    expect(captured.capture.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    // Every slot is given back once its wait has answered.
    expect(limits.open()).toBe(0);
  }, 120_000);

  it('a key under its cap is served while another key is at its own', async () => {
    const drafted = await draft('0.44');
    const held: Promise<ApiResult>[] = [];
    for (let i = 0; i < 3; i++) held.push((await openWait(keys.prober, drafted.id, idOf(keys.prober))).answer);
    const over = await call(keys.prober, 'GET', `/v1/authorizations/${drafted.id}?wait=30`);
    expect(over.status).toBe(429);
    const other = openWait(keys.otherProber, drafted.id, idOf(keys.otherProber));
    await other;
    await sign(drafted);
    const answers = await Promise.all([...held, (await other).answer]);
    expect(answers.map((a) => [a.status, a.body.state])).toEqual(Array(4).fill([200, 'stored']));
  }, 60_000);
});
