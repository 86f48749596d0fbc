// `npm start` (devstack/main.ts as its own process) on a chain of the operator's own: their deployment
// file (AUTHCAP_CONFIG) names it (here an anvil of this file's own, with our token), its URL and key in
// variables of the operator's choosing, which the stack hands to the worker and API it starts.
// A newcomer there used to get `payers: []` in dev.json, so the README's first payment failed, and a set
// AUTHCAP_RPC_PORT was dropped without a word. Now AUTHCAP_DEMO_PAYER_KEYS names payers for dev.json,
// and the start says which settings it ignores.
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, defineChain, http, type Address } from 'viem';
import { startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';
import type { DevJson } from '../../devstack/stack.js';
import { startNpmStart } from '../support/npmStart.js';
import { deployDevToken, devAccounts } from '../../devstack/token.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { walletSign } from '../support/api.js';
import { scratchDirs } from '../support/scratch.js';

const scratch = scratchDirs('external');

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let anvil: Anvil;
let tokenAddress: Address;
let main: ChildProcess;
let exited: Promise<number | null>;
let output: () => string = () => '';
let stateDir: string;
let rpcPort: number;
let dev: DevJson;
let configFile: string;
const accounts = devAccounts(2);

beforeAll(async () => {
  anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0.2 });
  const chain = defineChain({
    id: anvil.chainId,
    name: 'operator',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  // The operator's chain: the token is there and the payers hold some, before authcap starts.
  tokenAddress = await deployDevToken({ rpcUrl: anvil.rpcUrl, chain, accounts });

  stateDir = join(scratch(), 'state');
  rpcPort = await freePort();
  configFile = join(scratch(), 'operator.json');
  const network = {
    id: `eip155:${anvil.chainId}`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the deployment file's own ${VARIABLE} syntax
    rpcUrls: ['${OPERATOR_RPC_URL}'],
    tokens: [tokenAddress],
    merchantKeys: ['OPERATOR_MERCHANT_KEY'],
  };
  writeFileSync(configFile, JSON.stringify({ networks: [network] }), { mode: 0o600 });
  const started = await startNpmStart(stateDir, {
    AUTHCAP_CONFIG: configFile,
    OPERATOR_RPC_URL: anvil.rpcUrl,
    OPERATOR_MERCHANT_KEY: accounts.merchant.privateKey,
    AUTHCAP_DEMO_PAYER_KEYS: accounts.payers.map((p) => p.privateKey).join(','),
    // Set, as a newcomer copying the configuration table might: it cannot apply to someone else's chain.
    AUTHCAP_RPC_PORT: String(rpcPort),
    AUTHCAP_API_PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
  });
  ({ main, exited, dev } = started);
  output = started.output;
}, 240_000);

afterAll(async () => {
  if (main && main.exitCode === null) {
    main.kill('SIGINT');
    await Promise.race([exited, sleep(40_000)]);
  }
  await anvil?.stop();
}, 60_000);

describe('npm start on an external chain (AUTHCAP_CONFIG)', () => {
  it('says at start that AUTHCAP_RPC_PORT is ignored, and lists the AUTHCAP_DEMO_PAYER_KEYS payers in dev.json', async () => {
    expect(output()).toContain(`authcap: AUTHCAP_RPC_PORT=${rpcPort} is ignored: AUTHCAP_CONFIG names the chain, so no anvil is started`);
    expect(dev.configFile).toBe(configFile);
    // Nothing listens on that port: no anvil was started behind the operator's back.
    await expect(fetch(`http://127.0.0.1:${rpcPort}`, { method: 'POST', body: '{}' })).rejects.toThrow();
    expect(dev.rpcUrl).toBe(anvil.rpcUrl);
    expect(dev.tokenAddress.toLowerCase()).toBe(tokenAddress.toLowerCase());
    expect(dev.tokenOwner).toBeNull();
    expect(dev.payers).toEqual(accounts.payers.map((p) => ({ address: p.address, privateKey: p.privateKey.toLowerCase() })));
    expect(output()).toMatch(/Payers +2 from AUTHCAP_DEMO_PAYER_KEYS/);
  });

  it("runs the README's first payment with payers[0] of dev.json: created, signed, stored, captured on that chain", async () => {
    const payer = dev.payers[0]!;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${dev.apiUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${dev.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const created = await call('POST', '/v1/authorizations', { orderId: 'order-1', payer: payer.address, amount: '12.50' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.state).toBe('drafted');
    const stored = await call('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: walletSign(created.body.typedData, payer.privateKey) });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    expect(stored.body.state).toBe('stored');

    const chain = createPublicClient({ transport: http(anvil.rpcUrl) });
    const balance = () => chain.readContract({ address: tokenAddress, abi: tokenAbi, functionName: 'balanceOf', args: [payer.address] });
    const before = await balance();
    const captured = await call('POST', `/v1/authorizations/${created.body.id}/capture`);
    expect(captured.status, JSON.stringify(captured.body)).toBe(200);
    expect(captured.body.state).toBe('captured');
    expect(await balance()).toBe(before - 12_500_000n);
  }, 90_000);
});
