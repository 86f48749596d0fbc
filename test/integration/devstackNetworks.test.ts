// The dev stack with two networks (AUTHCAP_DEV_NETWORKS=2): two anvils with their own chain ids, our
// USDC on both and the 18-decimal DEUR18 on the second, a deployment.json every process can load that
// the chains confirm, funded payers in each token's own decimals, and dev.json saying all of it.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, defineChain, http, parseUnits, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devChainOptions, startDevChain } from '../../devstack/devNetworks.js';
import { freePort } from '../../devstack/process.js';
import type { DevJson, Stack } from '../../devstack/stack.js';
import { startTwoNetworkStack } from '../support/twoNetworkStack.js';
import { deployDevTokens, devAccounts } from '../../devstack/token.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { parseDeployment } from '../../runtime/deployment/load.js';
import { resolveDeployment, type ResolvedDeployment } from '../../runtime/deployment/resolve.js';
import { readSettings } from '../../runtime/settings/read.js';

const reader = (rpcUrl: string) => createPublicClient({ transport: http(rpcUrl) });
const devChain = (network: { chainId: number; name: string; rpcUrl: string }) =>
  defineChain({
    id: network.chainId,
    name: network.name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [network.rpcUrl] } },
  });
const STRANGER = '0x000000000000000000000000000000000000dEaD';

describe('the dev stack with two networks', () => {
  let stack: Stack;
  let stateDir: string;
  let running: Awaited<ReturnType<typeof startTwoNetworkStack>> | undefined;
  let resolved: ResolvedDeployment;
  beforeAll(async () => {
    running = await startTwoNetworkStack('networks');
    ({ stack, stateDir } = running);
    // As a process that never signs reads it (the API): no keys needed.
    const text = readFileSync(stack.devJson.configFile, 'utf8');
    resolved = await resolveDeployment(parseDeployment(text, stack.devJson.configFile, {}, { keys: false }));
  }, 240_000);
  afterAll(() => running?.stop());

  it('runs two anvils that answer their own chain ids', async () => {
    expect(stack.processes.anvils).toHaveLength(2);
    expect(new Set(stack.processes.anvils!.map((p) => p.child.pid)).size).toBe(2);
    const [first, second] = stack.devJson.networks;
    expect(first!.rpcUrl).not.toBe(second!.rpcUrl);
    expect(await reader(first!.rpcUrl).getChainId()).toBe(31337);
    expect(await reader(second!.rpcUrl).getChainId()).toBe(31338);
  });

  it('writes deployment.json (0600, no keys) that loads and that both chains confirm, token by token', () => {
    const file = stack.devJson.configFile;
    expect(file).toBe(join(stateDir, 'deployment.json'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(devAccounts().merchant.privateKey.slice(2));
    const raw = JSON.parse(text) as { networks: { id: string; merchantKeys: string[] }[] };
    expect(raw.networks.map((n) => [n.id, n.merchantKeys])).toEqual([
      ['eip155:31337', ['MERCHANT_PRIVATE_KEY']],
      ['eip155:31338', ['MERCHANT_PRIVATE_KEY']],
    ]);
    // What the chains say, not what the file says: resolveDeployment reads each token.
    const tokens = resolved.networks.map((n) => [n.network, n.chainId, n.tokens.map((t) => [t.name, t.symbol, t.decimals, t.version, t.form])]);
    expect(tokens).toEqual([
      ['eip155:31337', 31337, [['USD Coin', 'USDC', 6, '2', 'bytes']]],
      [
        'eip155:31338',
        31338,
        [
          ['USD Coin', 'USDC', 6, '2', 'bytes'],
          ['Dev Euro', 'DEUR18', 18, '2', 'bytes'],
        ],
      ],
    ]);
    // The catalog requests are checked against: the second network's tokens are told apart by symbol.
    expect(resolved.catalog.select({ network: 'eip155:31338', token: 'DEUR18' }).served.decimals).toBe(18);
    expect(resolved.catalog.select({ network: 'eip155:31338', token: 'usdc' }).served.decimals).toBe(6);
    expect(() => resolved.catalog.select({ token: 'USDC' })).toThrow(/name the network/);
  });

  it('funds every demo payer with 1000 whole tokens of each token, in its own decimals', async () => {
    const payers = stack.devJson.payers;
    expect(payers.length).toBeGreaterThan(0);
    for (const network of resolved.networks) {
      const client = reader(network.rpcUrls[0]!);
      for (const token of network.tokens) {
        const balances = await Promise.all(
          payers.map((p) => client.readContract({ address: token.address, abi: tokenAbi, functionName: 'balanceOf', args: [p.address] })),
        );
        expect(new Set(balances), `${token.symbol} on ${network.network}`).toEqual(new Set([parseUnits('1000', token.decimals)]));
      }
    }
  });

  it('lists both networks in dev.json, the first being the one its top-level fields describe', () => {
    const dev = JSON.parse(readFileSync(join(stateDir, 'dev.json'), 'utf8')) as DevJson;
    expect(dev).toEqual(JSON.parse(JSON.stringify(stack.devJson)));
    expect(dev.configFile).toBe(stack.devJson.configFile);
    const expected = resolved.networks.map((n) => ({
      network: n.network,
      chainId: n.chainId,
      name: n.name,
      rpcUrl: n.rpcUrls[0],
      tokens: n.tokens.map((t) => ({ address: t.address, symbol: t.symbol, decimals: t.decimals })),
      // Every dev network holds: its escrow, as the chain confirmed it.
      escrow: { escrow: n.escrow!.address, paymentCollector: n.escrow!.paymentCollector, refundCollector: n.escrow!.refundCollector },
    }));
    expect(dev.networks).toEqual(expected);
    expect(dev.networks.map((n) => n.name)).toEqual(['Dev chain', 'Dev chain 2']);
    expect(dev.networks[0]).toMatchObject({ chainId: dev.chainId, rpcUrl: dev.rpcUrl, tokens: [{ address: dev.tokenAddress }] });
  });

  it('deploys nothing twice: running the deployment again on the second chain finds both tokens', async () => {
    const second = stack.devJson.networks[1]!;
    const client = reader(second.rpcUrl);
    const owner = devAccounts().tokenOwner.address;
    const sent = await client.getTransactionCount({ address: owner });
    const chain = devChain(second);
    const again = await deployDevTokens({
      rpcUrl: second.rpcUrl,
      chain,
      accounts: devAccounts(),
      tokens: [
        { name: 'USD Coin', symbol: 'USDC', decimals: 6 },
        { name: 'Dev Euro', symbol: 'DEUR18', decimals: 18 },
      ],
    });
    expect(again).toEqual(second.tokens.map((t) => t.address));
    expect(await client.getTransactionCount({ address: owner })).toBe(sent);
  });
});

describe('the two dev networks on kept state (npm start)', () => {
  it('finds the same tokens at the same addresses after a restart, each chain in its own state file', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'authcap-networks-kept-'));
    const start = async (rpcPorts: number[]) => {
      const stops: (() => Promise<void>)[] = [];
      const options = devChainOptions(
        { networks: 2, rpcPort: rpcPorts[0]!, moreRpcPorts: rpcPorts.slice(1), stateDir, persistent: true, blockTimeSeconds: 0, merchantKeys: 2 },
        readSettings('dev-stack', {}),
        readSettings('worker', {}),
      );
      const chain = await startDevChain(options, stops);
      return { chain, stop: async () => void (await Promise.all(stops.map((stop) => stop()))) };
    };
    try {
      const owner = devAccounts().tokenOwner.address;
      const sentBy = (networks: { rpcUrl: string }[]) => Promise.all(networks.map((n) => reader(n.rpcUrl).getTransactionCount({ address: owner })));
      const first = await start([await freePort(), await freePort()]);
      // A mark only a kept chain can show after the restart: one unit of each token minted to a stranger.
      for (const network of first.chain.networks) {
        const wallet = createWalletClient({
          chain: devChain(network),
          transport: http(network.rpcUrl),
          account: privateKeyToAccount(devAccounts().tokenOwner.privateKey),
        });
        for (const token of network.tokens) {
          const hash = await wallet.writeContract({ address: token.address, abi: tokenAbi, functionName: 'mint', args: [STRANGER, 1n] });
          await reader(network.rpcUrl).waitForTransactionReceipt({ hash });
        }
      }
      const sentFirst = await sentBy(first.chain.networks);
      await first.stop();
      for (const file of ['anvil-state.json', 'anvil-state-31338.json']) expect(statSync(join(stateDir, file)).size, file).toBeGreaterThan(0);
      // Other ports: the state, not the port, carries the chain.
      const second = await start([await freePort(), await freePort()]);
      try {
        const tokensOf = (networks: { network: string; tokens: { address: Address; symbol: string }[] }[]) =>
          networks.map((n) => [n.network, n.tokens.map((t) => `${t.symbol}@${t.address}`)]);
        expect(tokensOf(second.chain.networks)).toEqual(tokensOf(first.chain.networks));
        // Found, not deployed again (a fresh chain would have them at the same addresses too): the mark
        // is still there, and the owner sent nothing more, neither deployments nor mints.
        for (const network of second.chain.networks) {
          for (const token of network.tokens) {
            const marked = await reader(network.rpcUrl).readContract({ address: token.address, abi: tokenAbi, functionName: 'balanceOf', args: [STRANGER] });
            expect(marked, `${token.symbol} on ${network.network}`).toBe(1n);
          }
        }
        expect(await sentBy(second.chain.networks)).toEqual(sentFirst);
        // The extra merchant key has gas on both chains.
        const extra = second.chain.chainConfig.merchantPrivateKeys ?? [];
        expect(extra).toHaveLength(1);
        for (const network of second.chain.networks) {
          expect(await reader(network.rpcUrl).getBalance({ address: privateKeyToAccount(extra[0]!).address }), network.network).toBeGreaterThan(0n);
        }
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 120_000);
});
