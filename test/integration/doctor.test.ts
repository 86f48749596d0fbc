// `authcap doctor` as an operator runs it: the CLI as a child process with the worker's environment,
// against the suite's stack (healthy), and against deployment files of its own that add a dead node
// or a wrong token address (the shared stack is never changed; the bad ones live in a temp dir).
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../devstack/process.js';
import { devAccounts, extraMerchantKeys } from '../../devstack/token.js';
import type { DeploymentFile } from '../../runtime/deployment/schema.js';
import type { DoctorCheck, DoctorReport } from '../../runtime/doctor/report.js';
import { searchAttributeKeys } from '../../domain/searchAttributes.js';
import { api, dev } from '../support/api.js';
import { repoRoot } from '../support/lifecycle.js';
import { startReceiver, type Receiver } from '../support/webhookReceiver.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'authcap-doctor-'));
let receiver: Receiver;
let endpointId: string;

/** The worker's environment for the suite's stack: its Temporal, its deployment file, its keys. */
function workerEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  const d = dev();
  const more = extraMerchantKeys(d.merchantAddresses.length - 1).map((k) => k.privateKey);
  return {
    ...process.env,
    TEMPORAL_ADDRESS: d.temporalAddress,
    TEMPORAL_NAMESPACE: d.temporalNamespace,
    AUTHCAP_CODEC_KEYS: inject('codecKeys'),
    AUTHCAP_CONFIG: d.configFile,
    MERCHANT_PRIVATE_KEY: devAccounts().merchant.privateKey,
    MERCHANT_PRIVATE_KEYS: more.join(','),
    // Its own state dir: no dev key file to fall back on.
    AUTHCAP_STATE_DIR: join(dir, 'state'),
    AUTHCAP_WEBHOOK_ALLOW_LOOPBACK: '1',
    ...overrides,
  };
}

async function doctor(env: NodeJS.ProcessEnv, json = true): Promise<{ code: number; stdout: string; report: DoctorReport | undefined }> {
  let code = 0;
  let stdout: string;
  try {
    // The kill timeout only keeps a hung child from outliving the run; the test's own timeout fails it.
    ({ stdout } = await run(process.execPath, ['bin/authcap.mjs', 'doctor', ...(json ? ['--json'] : [])], { cwd: repoRoot, env, timeout: 110_000 }));
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    code = typeof e.code === 'number' ? e.code : -1;
    stdout = e.stdout ?? '';
    if (code !== 1) throw new Error(`doctor exited ${e.code}: ${e.stderr}`);
  }
  return { code, stdout, report: json ? (JSON.parse(stdout) as DoctorReport) : undefined };
}

const find = (report: DoctorReport, area: DoctorCheck['area'], subject: string) => {
  const found = report.checks.find((c) => c.area === area && c.subject === subject);
  if (!found) throw new Error(`no ${area} check "${subject}" in ${JSON.stringify(report.checks.map((c) => `${c.area}: ${c.subject}`))}`);
  return found;
};

/** The stack's deployment file with changes, written beside the test. */
function deploymentWith(change: (config: DeploymentFile) => void): string {
  const config = JSON.parse(readFileSync(dev().configFile, 'utf8')) as DeploymentFile;
  change(config);
  const file = join(dir, `deployment-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

beforeAll(async () => {
  receiver = await startReceiver();
  const created = await api('POST', '/v1/webhook_endpoints', { url: `${receiver.url}/doctor`, events: ['authorization.drafted'] });
  expect(created.status).toBe(201);
  endpointId = created.body.id;
});

afterAll(async () => {
  if (endpointId) await api('DELETE', `/v1/webhook_endpoints/${endpointId}`);
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('authcap doctor', () => {
  it('passes a healthy deployment: every network, token, merchant key, Temporal and the keys are ok', async () => {
    const d = dev();
    const { code, report } = await doctor(workerEnv());
    expect(code).toBe(0);
    expect(report!.ok).toBe(true);
    for (const network of d.networks) {
      expect(find(report!, 'network', network.network)).toMatchObject({ status: 'ok', message: expect.stringContaining(`serves chain ${network.chainId}`) });
      for (const token of network.tokens)
        expect(find(report!, 'token', `${network.network} token ${token.address}`)).toMatchObject({
          status: 'ok',
          message: expect.stringContaining(`${token.symbol}: `),
        });
      for (const merchant of d.merchantAddresses)
        expect(find(report!, 'merchant', `${network.network} merchant ${merchant}`)).toMatchObject({
          status: 'ok',
          message: expect.stringMatching(/captures at the current fee/),
        });
    }
    for (const processName of ['worker', 'api']) expect(find(report!, 'settings', processName).status).toBe('ok');
    expect(find(report!, 'codec', 'payload keys').status).toBe('ok');
    expect(find(report!, 'codec', 'payload keys vs. Temporal').status).toBe('ok');
    expect(find(report!, 'temporal', `namespace ${d.temporalNamespace}`).status).toBe('ok');
    expect(find(report!, 'temporal', 'search attributes')).toMatchObject({
      status: 'ok',
      message: `all ${searchAttributeKeys.length} registered with their types`,
    });
    expect(find(report!, 'temporal', 'task queue authcap').status).toBe('ok');
    // Our receiver answers; other files' endpoints may point at receivers already gone (a warning at most).
    expect(find(report!, 'webhook', `${endpointId} ${receiver.url}/doctor`)).toMatchObject({ status: 'ok', message: expect.stringContaining('answers') });
    for (const c of report!.checks) expect(c.area === 'webhook' ? ['ok', 'warn'] : ['ok'], `${c.area}: ${c.subject}: ${c.message}`).toContain(c.status);
  });

  it('prints a table people read: one row per check and a summary', async () => {
    const d = dev();
    const { code, stdout } = await doctor(workerEnv(), false);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^ok\\s+network: ${d.networks[0]!.network}\\s+the node at`, 'm'));
    expect(stdout).toMatch(/^ok\s+temporal: search attributes/m);
    expect(stdout).not.toMatch(/^FAIL/m);
    expect(stdout).toMatch(/\d+ ok, \d+ warn, 0 FAIL: /);
  });

  it('FAILs a dead node and a silent one in plain words, and still checks everything else', async () => {
    const d = dev();
    const port = await freePort();
    // A node that takes the connection and never answers: the doctor's bound, not the node, ends the call.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as AddressInfo).port;
    try {
      const file = deploymentWith((config) => {
        config.networks.push(
          { id: 'eip155:31338', rpcUrls: [`http://127.0.0.1:${port}`], tokens: [d.tokenAddress], merchantKeys: ['MERCHANT_PRIVATE_KEY'] },
          { id: 'eip155:31339', rpcUrls: [`http://127.0.0.1:${silentPort}`], tokens: [d.tokenAddress], merchantKeys: ['MERCHANT_PRIVATE_KEY'] },
        );
      });
      const { code, report } = await doctor(workerEnv({ AUTHCAP_CONFIG: file }));
      expect(code).toBe(1);
      expect(find(report!, 'network', 'eip155:31338')).toEqual({
        status: 'fail',
        area: 'network',
        subject: 'eip155:31338',
        message: `the node at http://127.0.0.1:${port} does not answer (connection refused: nothing listens there)`,
        fix: `check networks[1].rpcUrls[0] in ${file}, and that the node is up`,
      });
      expect(find(report!, 'network', 'eip155:31339')).toMatchObject({
        status: 'fail',
        message: `the node at http://127.0.0.1:${silentPort} does not answer (no answer in time)`,
        fix: `check networks[2].rpcUrls[0] in ${file}, and that the node is up`,
      });
      expect(find(report!, 'token', `eip155:31338 token ${d.tokenAddress}`)).toMatchObject({
        status: 'skip',
        message: 'not checked: no node of eip155:31338 answers',
      });
      // The live network, Temporal and the keys are checked all the same.
      expect(find(report!, 'network', d.networks[0]!.network).status).toBe('ok');
      expect(find(report!, 'token', `${d.networks[0]!.network} token ${d.tokenAddress}`).status).toBe('ok');
      expect(find(report!, 'temporal', 'search attributes').status).toBe('ok');
      expect(find(report!, 'codec', 'payload keys').status).toBe('ok');
      expect(report!.checks.filter((c) => c.status === 'fail').map((c) => c.subject)).toEqual(['eip155:31338', 'eip155:31339']);
    } finally {
      silent.closeAllConnections?.();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('FAILs a token address with no contract, naming the address and where it is configured', async () => {
    const d = dev();
    const network = d.networks[0]!.network;
    const nowhere = privateKeyToAccount(generatePrivateKey()).address;
    const file = deploymentWith((config) => {
      config.networks[0]!.tokens.push(nowhere);
    });
    const { code, report } = await doctor(workerEnv({ AUTHCAP_CONFIG: file }));
    expect(code).toBe(1);
    expect(find(report!, 'token', `${network} token ${nowhere}`)).toMatchObject({
      status: 'fail',
      message: 'no contract at this address on this network',
      fix: `check networks[0].tokens[1] in ${file}: it must be the token's contract address on ${network}`,
    });
    expect(find(report!, 'token', `${network} token ${d.tokenAddress}`).status).toBe('ok');
    expect(report!.checks.filter((c) => c.status === 'fail').map((c) => c.subject)).toEqual([`${network} token ${nowhere}`]);
  });

  it('FAILs a namespace that does not exist and says to run temporal-setup', async () => {
    const { code, report } = await doctor(workerEnv({ TEMPORAL_NAMESPACE: 'authcap-doctor-nowhere' }));
    expect(code).toBe(1);
    expect(find(report!, 'temporal', 'namespace authcap-doctor-nowhere')).toMatchObject({
      status: 'fail',
      message: 'namespace authcap-doctor-nowhere does not exist',
      fix: expect.stringContaining('authcap temporal-setup'),
    });
    expect(find(report!, 'temporal', 'search attributes').status).toBe('skip');
  });
});
