// `npm start`'s stack as a newcomer gets it, on free ports: the worker and the API run as their own
// processes, the state is private, dev.json carries both keys and the codec server, and reads keep
// answering while the worker is down (they come from the memo, not from a workflow query).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignTypedDataVersion, signTypedData } from '@metamask/eth-sig-util';
import { freePort } from '../../devstack/process.js';
import { startStack, type Stack } from '../../devstack/stack.js';
import { scratchDirs } from '../support/scratch.js';

const scratch = scratchDirs('devstack');

describe('the dev stack (npm start) with separate processes', () => {
  let stack: Stack;
  let stateDir: string;
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    // Its own codec key and chain: clear what the suite's stack put in this process's environment.
    for (const name of ['AUTHCAP_CODEC_KEYS', 'TEMPORAL_ADDRESS']) {
      saved[name] = process.env[name];
      delete process.env[name];
    }
    stateDir = join(scratch(), 'state');
    stack = await startStack({
      stateDir,
      apiPort: await freePort(),
      rpcPort: await freePort(),
      temporalPort: await freePort(),
      temporalUiPort: await freePort(),
      persistent: true,
      separateProcesses: true,
      blockTimeSeconds: 0.2,
      log: () => undefined,
    });
  }, 240_000);
  afterAll(async () => {
    await stack?.stop();
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });

  const call = (path: string, init: RequestInit = {}, key: string | null = stack.devJson.apiKey) =>
    fetch(`${stack.devJson.apiUrl}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...init.headers },
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));

  it('writes dev.json with both keys and the codec server, and keeps its state private', () => {
    const dev = stack.devJson;
    expect(dev.apiKey).toMatch(/^ak_/);
    expect(dev.operatorApiKey).toMatch(/^ak_/);
    expect(dev.codecUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+$/);
    expect(stack.processes.worker?.child.pid).toBeGreaterThan(0);
    expect(stack.processes.api?.child.pid).toBeGreaterThan(0);
    const mode = (file: string) => statSync(join(stateDir, file)).mode & 0o777;
    expect(mode('.')).toBe(0o700);
    for (const file of ['dev.json', 'temporal.db', 'api-keys.json', 'codec-keys.json']) expect(mode(file), file).toBe(0o600);
  });

  it("keeps the codec token out of every command line and out of the Web UI's public settings", async () => {
    const token = readFileSync(join(stateDir, 'codec-token'), 'utf8').trim();
    expect(stack.devJson.codecUrl).toBe(`${stack.devJson.codecEndpoint}/${token}`);
    const temporalPid = stack.processes.temporal!.child.pid!;
    const cmdline = readFileSync(`/proc/${temporalPid}/cmdline`, 'utf8');
    expect(cmdline).toContain('--ui-codec-endpoint');
    const { workers = [], apis = [], temporal, anvil } = stack.processes;
    for (const proc of [...workers, ...apis, temporal, anvil]) {
      expect(readFileSync(`/proc/${proc!.child.pid}/cmdline`, 'utf8'), proc!.name).not.toContain(token);
    }
    // What any local user gets from the UI, no login: the endpoint, without a secret.
    const settings = (await (await fetch(`${stack.devJson.temporalUiUrl}/api/v1/settings`)).json()) as { Codec: { Endpoint: string } };
    expect(settings.Codec.Endpoint).toBe(stack.devJson.codecEndpoint);
    expect(JSON.stringify(settings)).not.toContain(token);
    // The operator's browser on the UI decodes through it (this OS user); a page elsewhere does not.
    const decode = (origin: string) =>
      fetch(`${stack.devJson.codecEndpoint}/decode`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json', 'x-namespace': 'default' },
        body: '{"payloads":[]}',
      });
    const fromUi = await decode(stack.devJson.temporalUiUrl!);
    expect(fromUi.status).toBe(200);
    expect(fromUi.headers.get('access-control-allow-origin')).toBe(stack.devJson.temporalUiUrl);
    expect((await decode('http://127.0.0.1:1')).status).toBe(401);
  });

  it("serves the worker's metrics and /readyz, and the API's /readyz counts workflows whose tasks keep failing and reports the head feed", async () => {
    const metricsUrl = stack.devJson.workerMetricsUrl!;
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const readyz = metricsUrl.replace(/\/metrics$/, '/readyz');
    let worker = (await (await fetch(readyz)).json()) as { status: string; failingWorkflows: unknown[]; heads?: { state: string } };
    // The worker subscribed to anvil's new blocks as it started; give the first answer a moment.
    for (const started = Date.now(); worker.heads?.state === 'connecting' && Date.now() - started < 10_000; ) {
      await new Promise((r) => setTimeout(r, 200));
      worker = (await (await fetch(readyz)).json()) as typeof worker;
    }
    expect(worker).toMatchObject({ status: 'ok', failingWorkflows: [], heads: { state: 'live', live: true } });
    const metrics = await (await fetch(metricsUrl)).text();
    expect(metrics).toContain('authcap_workflows_with_failing_tasks 0');
    expect(metrics).toMatch(/^authcap_head_feed_live\{network="eip155:\d+"\} 1$/m);
    const ready = await call('/readyz', {}, null);
    expect(ready.body.checks.workflowTasks).toEqual({ failing: 0 });
    expect(ready.body.checks.heads).toEqual({ ok: true, state: 'live' });
    expect({ status: ready.status, state: ready.body.status }).toEqual({ status: 200, state: 'ready' });
  });

  it('requires the key (401), and the operator key cannot create (403)', async () => {
    expect((await call('/v1/authorizations', {}, null)).status).toBe(401);
    const payer = stack.devJson.payers[0]!;
    const create = await call(
      '/v1/authorizations',
      { method: 'POST', body: JSON.stringify({ orderId: `dev-${Date.now()}`, payer: payer.address, amount: '1' }) },
      stack.devJson.operatorApiKey,
    );
    expect(create.status).toBe(403);
  });

  it('reads answer at once while the worker process is down', async () => {
    const payer = stack.devJson.payers[1]!;
    const created = await call('/v1/authorizations', {
      method: 'POST',
      body: JSON.stringify({ orderId: `dev-kill-${Date.now()}`, payer: payer.address, amount: '1.5' }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const signature = signTypedData({
      privateKey: Buffer.from(payer.privateKey.slice(2), 'hex'),
      data: created.body.typedData,
      version: SignTypedDataVersion.V4,
    });
    expect((await call(`/v1/authorizations/${created.body.id}/signature`, { method: 'POST', body: JSON.stringify({ signature }) })).status).toBe(200);

    stack.processes.worker!.child.kill('SIGKILL');
    await stack.processes.worker!.exited;
    const started = Date.now();
    const read = await call(`/v1/authorizations/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.state).toBe('stored');
    expect(Date.now() - started).toBeLessThan(1_000);
    // Liveness is the API's own; readiness reports Temporal and the node as they are.
    expect((await call('/healthz', {}, null)).status).toBe(200);
    const ready = await call('/readyz', {}, null);
    expect(ready.body.checks.temporal.ok).toBe(true);
    expect(ready.body.checks.node.ok).toBe(true);
  }, 120_000);
});
