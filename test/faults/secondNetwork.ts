// A second network for the fault suite's world (startWorld({ networks: 2 })): its own anvil with
// chain id 31338, our token, and its own fault proxy, served by the same workers and API through a
// deployment file. The audit runs on each network as if it were a world of its own (`asWorld`).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicClient, createTestClient, createWalletClient, defineChain, http, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';
import { deployDevToken, type DevAccounts } from '../../devstack/token.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { startFaultProxy, type FaultProxy } from './faultProxy.js';

export const SECOND_CHAIN_ID = 31338;

export interface SecondNetwork {
  network: string;
  anvil: Anvil;
  proxy: FaultProxy;
  tokenAddress: Address;
  payerBalancesAtStart: Map<string, bigint>;
  startBlock: bigint;
  publicClient: ReturnType<typeof createPublicClient>;
  testClient: ReturnType<typeof createTestClient>;
  ownerWallet: ReturnType<typeof createWalletClient>;
  stop(): Promise<void>;
}

export async function startSecondNetwork(accounts: DevAccounts): Promise<SecondNetwork> {
  const anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0.2, chainId: SECOND_CHAIN_ID });
  const chain = defineChain({
    id: SECOND_CHAIN_ID,
    name: 'faults-2',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  const tokenAddress = await deployDevToken({ rpcUrl: anvil.rpcUrl, chain, accounts });
  const proxy = await startFaultProxy(anvil.rpcUrl);
  const transport = http(anvil.rpcUrl);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const startBlock = await publicClient.getBlockNumber();
  const payerBalancesAtStart = new Map<string, bigint>();
  for (const p of accounts.payers) {
    const balance = await publicClient.readContract({
      address: tokenAddress,
      abi: tokenAbi,
      functionName: 'balanceOf',
      args: [p.address],
      blockNumber: startBlock,
    });
    payerBalancesAtStart.set(p.address.toLowerCase(), balance);
  }
  return {
    network: `eip155:${SECOND_CHAIN_ID}`,
    anvil,
    proxy,
    tokenAddress,
    payerBalancesAtStart,
    startBlock,
    publicClient: publicClient as never,
    testClient: createTestClient({ chain, transport, mode: 'anvil' }) as never,
    ownerWallet: createWalletClient({ chain, transport, account: privateKeyToAccount(accounts.tokenOwner.privateKey) }) as never,
    async stop() {
      await proxy.close().catch(() => undefined);
      await anvil.stop().catch(() => undefined);
    },
  };
}

/** deployment.json for both networks, each through its fault proxy; the first is the default. */
export function writeTwoNetworkDeployment(
  stateDir: string,
  first: { chainId: number; proxyUrl: string; tokenAddress: Address },
  second: SecondNetwork,
): string {
  const file = join(stateDir, 'deployment.json');
  const config = {
    networks: [
      { id: `eip155:${first.chainId}`, rpcUrls: [first.proxyUrl], tokens: [first.tokenAddress] },
      { id: second.network, rpcUrls: [second.proxy.url], tokens: [second.tokenAddress] },
    ],
  };
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return file;
}
