// A worker whose WebSocket URL points at a closed port: its waits cannot wake on announced blocks and
// poll the node instead, so captures still succeed, only slower. That used to be invisible (/readyz
// said ready). Now the worker's /readyz says its head feed is failing, and the API's /readyz answers
// 200 `degraded` with a `heads` check saying why: still in service, but not as it should be.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../devstack/process.js';
import { walletSign } from '../support/api.js';
import { startIsolatedChain, type IsolatedChain } from '../support/isolatedChain.js';
import { startOwnApi, type OwnApi } from '../support/ownApi.js';

let chain: IsolatedChain;
let own: OwnApi;
let closedPort: number;
let workerReadyz: string;

const call = async (method: string, path: string, body?: unknown, key: string | null = own.key) => {
  const res = await fetch(`${own.url}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

beforeAll(async () => {
  // Free a moment ago and never listened on: every connection to it is refused.
  closedPort = await freePort();
  const metricsPort = await freePort();
  workerReadyz = `http://127.0.0.1:${metricsPort}/readyz`;
  chain = await startIsolatedChain({ env: { AUTHCAP_WS_URL: `ws://127.0.0.1:${closedPort}`, AUTHCAP_WORKER_METRICS_PORT: String(metricsPort) } });
  own = await startOwnApi('heads', { rpcUrl: chain.anvil.rpcUrl, workerReadyzUrl: workerReadyz }, chain.taskQueue);
}, 180_000);

afterAll(async () => {
  await own?.close();
  await chain?.stop();
});

describe('a worker whose WebSocket head feed is unreachable', () => {
  it("says so on its own /readyz and /metrics, and the API's /readyz is 200 degraded with a heads check", async () => {
    // The worker subscribes at start; the refusal comes at once (allow a moment for the first try).
    let worker: any;
    for (const started = Date.now(); Date.now() - started < 10_000; ) {
      worker = await (await fetch(workerReadyz)).json();
      if (worker.heads?.state === 'failing') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(worker).toMatchObject({ status: 'degraded', failingWorkflows: [], heads: { state: 'failing', live: false, lastHeadAt: null } });
    expect(worker.heads.detail).toMatch(/WebSocket subscription to new blocks failed.*poll the node/);
    // The URL may carry a provider's key: never in a report.
    expect(JSON.stringify(worker)).not.toContain(`ws://127.0.0.1:${closedPort}`);
    const metrics = await (await fetch(workerReadyz.replace(/\/readyz$/, '/metrics'))).text();
    expect(metrics).toMatch(/^authcap_head_feed_live\{network="eip155:\d+"\} 0$/m);

    const ready = await call('GET', '/readyz', undefined, null);
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('degraded');
    expect(ready.body.checks.temporal.ok).toBe(true);
    expect(ready.body.checks.node.ok).toBe(true);
    expect(ready.body.checks.heads).toEqual({
      ok: false,
      state: 'failing',
      detail: expect.stringMatching(/head feed is down.*wsUrl.*captures still succeed but take longer/),
    });
  }, 30_000);

  it('still captures (why degraded is 200, not 503), and stays degraded meanwhile', async () => {
    const payer = chain.payers[1]!;
    const created = await call('POST', '/v1/authorizations', { orderId: `heads-${process.pid}-${Date.now()}`, payer: payer.address, amount: '0.75' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const stored = await call('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: walletSign(created.body.typedData, payer.privateKey) });
    expect(stored.body.state).toBe('stored');
    const captured = await call('POST', `/v1/authorizations/${created.body.id}/capture`);
    expect(captured.status, JSON.stringify(captured.body)).toBe(200);
    expect(captured.body.state).toBe('captured');
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: captured.body.capture.transactionHash });
    expect(receipt.status).toBe('success');

    const ready = await call('GET', '/readyz', undefined, null);
    expect({ status: ready.status, state: ready.body.status, heads: ready.body.checks.heads.state }).toEqual({
      status: 200,
      state: 'degraded',
      heads: 'failing',
    });
  }, 60_000);
});
