// Hygiene findings from the outside probe (finding 7 b–e), against real servers: an aborted body was
// logged as an error and counted 500 under route="unmatched" (as was every error after routing), the
// same JSON with its keys reordered was 409 under its Idempotency-Key, a capture with no body and no
// Content-Type was 415, and the watcher's cursor file was 0644 outside the dev stack's umask.
import { connect } from 'node:net';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Client } from '@temporalio/client';
import { nonceScopeOf } from '../../activities/nonceKey.js';
import { networkOfChainId } from '../../runtime/deployment/schema.js';
import { startWatcher } from '../../worker/watcher.js';
import { api, chain, dev, newOrderId } from '../support/api.js';
import { mint, stored } from '../support/lifecycle.js';
import { connectTemporal } from '../support/temporal.js';
import { startOwnApi, type OwnApi } from '../support/ownApi.js';

/** One HTTP/1.1 request written byte for byte (fetch adds Content-Type and Content-Length itself). */
function raw(url: string, head: string[], body = '', options: { hangUpAfterMs?: number } = {}): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`${[...head, `Host: ${hostname}:${port}`, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`);
      if (options.hangUpAfterMs !== undefined) setTimeout(() => socket.destroy(), options.hangUpAfterMs);
    });
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0), text: data.split('\r\n\r\n').slice(1).join('\r\n\r\n') }));
    socket.on('error', (err) => (options.hangUpAfterMs === undefined ? reject(err) : undefined));
  });
}

describe('an API of its own: metrics of aborted and failed requests', () => {
  let own: OwnApi;
  let key: string;
  let url: string;
  beforeAll(async () => {
    own = await startOwnApi('hygiene');
    ({ key, url } = own);
  });
  afterAll(() => own?.close());

  /** authcap_http_requests_total by `route status`, from this process's API (its own registry). */
  async function counts(): Promise<Map<string, number>> {
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const found = new Map<string, number>();
    for (const m of (await res.text()).matchAll(/^authcap_http_requests_total\{route="([^"]*)",status="(\d+)"\} (\d+)$/gm)) {
      found.set(`${m[1]} ${m[2]}`, Number(m[3]));
    }
    return found;
  }
  const delta = (before: Map<string, number>, after: Map<string, number>, label: string) => (after.get(label) ?? 0) - (before.get(label) ?? 0);

  it('a body the client abandons is counted 499 under its route, never 500', async () => {
    const before = await counts();
    const head = ['POST /v1/authorizations HTTP/1.1', `Authorization: Bearer ${key}`, 'Content-Type: application/json', 'Content-Length: 4000'];
    await raw(url, head, '{"orderId":"hygiene-abort","pay', { hangUpAfterMs: 150 });
    await vi.waitFor(async () => expect(delta(before, await counts(), 'POST /v1/authorizations 499')).toBe(1), { timeout: 5_000 });
    const after = await counts();
    for (const label of after.keys()) if (label.endsWith(' 500')) expect(delta(before, after, label), label).toBe(0);
    expect(delta(before, after, 'unmatched 499')).toBe(0);
  });

  it('errors thrown after routing are counted under the route, not "unmatched"', async () => {
    const before = await counts();
    const post = (body: string, type: string) =>
      fetch(`${url}/v1/authorizations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': type }, body });
    expect((await post('{"bogus":1}', 'application/json')).status).toBe(400);
    expect((await post('{}', 'text/plain')).status).toBe(415);
    expect((await fetch(`${url}/v1/authorizations/auth_nope`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
    const after = await counts();
    expect(delta(before, after, 'POST /v1/authorizations 400')).toBe(1);
    expect(delta(before, after, 'POST /v1/authorizations 415')).toBe(1);
    expect(delta(before, after, 'GET /v1/authorizations/:id 404')).toBe(1);
    expect(delta(before, after, 'unmatched 400') + delta(before, after, 'unmatched 415') + delta(before, after, 'unmatched 404')).toBe(0);
    // A path no route has is still "unmatched".
    expect((await fetch(`${url}/v2/nothing`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
    expect(delta(after, await counts(), 'unmatched 404')).toBe(1);
  });
});

describe('the stack API', () => {
  it('captures with no body and no Content-Type (length 0 or absent); a body still needs application/json', async () => {
    const privateKey = generatePrivateKey();
    const p = { address: privateKeyToAccount(privateKey).address, privateKey };
    await mint(p.address, parseUnits('10', 6));
    const s = await stored(p, '1.25');
    const path = `/v1/authorizations/${s.id}/capture`;
    const auth = `Authorization: Bearer ${dev().apiKey}`;
    // A body without a type, or a chunked one (its length unknown up front), is still refused, and nothing moves.
    const typeless = await raw(dev().apiUrl, [`POST ${path} HTTP/1.1`, auth, 'Content-Length: 2'], '{}');
    expect(typeless.status, typeless.text).toBe(415);
    const chunked = await raw(dev().apiUrl, [`POST ${path} HTTP/1.1`, auth, 'Transfer-Encoding: chunked'], '0\r\n\r\n');
    expect(chunked.status, chunked.text).toBe(415);
    expect((await api('GET', `/v1/authorizations/${s.id}`)).body.state).toBe('stored');

    const res = await fetch(`${dev().apiUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${dev().apiKey}` } });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.state).toBe('captured');
    // No Content-Length at all: a request without a body.
    const again = await raw(dev().apiUrl, [`POST ${path} HTTP/1.1`, auth]);
    expect(again.status, again.text).toBe(200);
    expect(JSON.parse(again.text).state).toBe('captured');
  });

  it('the same JSON with its keys in another order under one Idempotency-Key replays the first answer', async () => {
    const payer = privateKeyToAccount(generatePrivateKey()).address;
    const orderId = newOrderId('hygiene-idem');
    const key = `reorder-${orderId}`;
    const first = await api('POST', '/v1/authorizations', `{"orderId":"${orderId}","payer":"${payer}","amount":"0.5"}`, {
      headers: { 'idempotency-key': key },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const again = await api('POST', '/v1/authorizations', `{"amount":"0.5","payer":"${payer}","orderId":"${orderId}"}`, {
      headers: { 'idempotency-key': key },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers?.get('idempotent-replayed')).toBe('true');
    const changed = await api('POST', '/v1/authorizations', `{"amount":"0.6","payer":"${payer}","orderId":"${orderId}"}`, {
      headers: { 'idempotency-key': key },
    });
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe('idempotency_key_reused');
  });
});

describe('the watcher cursor file', () => {
  let temporal: Client;
  let dir: string;
  let previousUmask: number;
  beforeAll(async () => {
    temporal = await connectTemporal();
    dir = mkdtempSync(join(tmpdir(), 'authcap-cursor-'));
    // What a worker started outside the dev stack gets: the usual 022, not the stack's 077.
    previousUmask = process.umask(0o022);
  });
  afterAll(async () => {
    process.umask(previousUmask);
    await temporal?.connection.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function runWatcher(cursorFile: string): Promise<void> {
    const watcher = startWatcher({
      client: temporal,
      publicClient: chain() as never,
      tokens: [{ address: dev().tokenAddress, nonceScope: nonceScopeOf(networkOfChainId(dev().chainId), dev().tokenAddress) }],
      cursorFile,
      pollIntervalMs: 100,
    });
    try {
      await watcher.ready;
    } finally {
      await watcher.stop();
    }
  }

  it('is written 0600 whatever the umask, and an existing 0644 one is made 0600', async () => {
    const fresh = join(dir, 'fresh', 'watcher-cursor.json');
    await runWatcher(fresh);
    expect(statSync(fresh).mode & 0o777).toBe(0o600);

    // Ahead of the chain, so this run has no block to scan and never rewrites it: only reading it may fix its mode.
    const existing = join(dir, 'existing-cursor.json');
    const ahead = `${JSON.stringify({ lastBlock: ((await chain().getBlockNumber()) + 1_000_000n).toString() })}\n`;
    writeFileSync(existing, ahead);
    chmodSync(existing, 0o644);
    await runWatcher(existing);
    expect(readFileSync(existing, 'utf8')).toBe(ahead);
    expect(statSync(existing).mode & 0o777).toBe(0o600);
  });
});
