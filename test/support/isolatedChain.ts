// A chain of a test's own beside the suite's stack: its own anvil (whose mining the test may pause),
// an optional JSON-RPC proxy that injects faults, our token, and a worker process on its own task
// queue with its own merchant key (so its relayer is its own too). Temporal is the suite's.
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createTestClient, createWalletClient, defineChain, http, parseEther, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { AuthcapClient } from '../../client/authcapClient.js';
import type { ContractArtifact } from '../../contracts/artifacts.js';
import { startAnvil, ANVIL_MNEMONIC, type Anvil } from '../../devstack/anvil.js';
import { variablesReadBy } from '../../devstack/childEnv.js';
import { freePort, startProcess, type ManagedProcess } from '../../devstack/process.js';
import { processCommand } from '../../devstack/build.js';
import { deployDevToken, devAccounts } from '../../devstack/token.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { networkOfChainId } from '../../runtime/deployment/schema.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { startRpcProxy, type ProxyOptions } from '../chain/support/rpcProxy.js';
import { dev } from './api.js';
import { writeTestDeployment } from './deploymentFile.js';

function newKey(): { address: Address; privateKey: Hex } {
  const privateKey = generatePrivateKey();
  return { address: privateKeyToAccount(privateKey).address, privateKey };
}

function keyAt(addressIndex: number): { address: Address; privateKey: Hex } {
  const account = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex });
  return { address: account.address, privateKey: toHex(account.getHdKey().privateKey!) };
}

export interface IsolatedChain {
  anvil: Anvil;
  /** The anvil's CAIP-2 id, as the worker serves it (relayer ids name it). */
  network: string;
  /** What the worker talks to: the proxy when one was asked for, else anvil. */
  workerRpcUrl: string;
  tokenAddress: Address;
  merchant: { address: Address; privateKey: Hex };
  owner: { address: Address; privateKey: Hex };
  payers: { address: Address; privateKey: Hex }[];
  taskQueue: string;
  client: AuthcapClient;
  worker: ManagedProcess;
  publicClient: ReturnType<typeof createPublicClient>;
  testClient: ReturnType<typeof createTestClient>;
  ownerWallet: ReturnType<typeof createWalletClient>;
  /** Stops interval mining (transactions wait in the pool) or resumes it. */
  setMining(on: boolean): Promise<void>;
  restartWorker(): Promise<void>;
  stop(): Promise<void>;
}

export async function startIsolatedChain(
  options: { proxy?: ProxyOptions; env?: Record<string, string>; token?: ContractArtifact } = {},
): Promise<IsolatedChain> {
  const anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0.2 });
  const chain = defineChain({
    id: anvil.chainId,
    name: 'isolated',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  const transport = http(anvil.rpcUrl);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 });
  const testClient = createTestClient({ chain, transport, mode: 'anvil' });
  // A key of its own, never one another test process could pick: the relayer's workflow id is the
  // network's and key's (relayer-<network>-<address>; every anvil is eip155:31337), and Temporal is the suite's, so two chains sharing a key would share
  // a relayer, and one chain's captures would be sent on the other's.
  const merchant = newKey();
  await testClient.setBalance({ address: merchant.address, value: parseEther('100') });
  const accounts = { ...devAccounts(4), merchant };
  const tokenAddress = await deployDevToken({ rpcUrl: anvil.rpcUrl, chain, accounts, artifact: options.token });
  const proxy = options.proxy ? await startRpcProxy(anvil.rpcUrl, options.proxy) : undefined;
  const workerRpcUrl = proxy?.url ?? anvil.rpcUrl;
  const taskQueue = `isolated-${process.pid}-${randomBytes(4).toString('hex')}`;
  const workerLog = join(tmpdir(), `authcap-${taskQueue}-worker.log`);
  // Its deployment file (AUTHCAP_WS_URL or AUTHCAP_CONFIRMATIONS in options.env are written in).
  const configFile = writeTestDeployment(
    mkdtempSync(join(tmpdir(), `authcap-${taskQueue}-`)),
    { chainId: anvil.chainId, rpcUrl: workerRpcUrl, tokenAddress },
    options.env,
  );
  const root = fileURLToPath(new URL('../..', import.meta.url));

  const spawnWorker = () => {
    let output = '';
    return startProcess({
      name: `worker ${taskQueue}`,
      command: process.execPath,
      cwd: root,
      args: processCommand('worker/main.ts').args,
      env: {
        TEMPORAL_ADDRESS: dev().temporalAddress,
        TEMPORAL_NAMESPACE: dev().temporalNamespace,
        AUTHCAP_TASK_QUEUE: taskQueue,
        AUTHCAP_CONFIG: configFile,
        MERCHANT_PRIVATE_KEY: merchant.privateKey,
        AUTHCAP_RECONCILE_SECONDS: '2',
        AUTHCAP_WATCH: '0',
        ...(process.env.AUTHCAP_CODEC_KEYS ? { AUTHCAP_CODEC_KEYS: process.env.AUTHCAP_CODEC_KEYS } : {}),
        ...options.env,
      },
      inherit: variablesReadBy('worker'),
      readyTimeoutMs: 120_000,
      onOutput: (chunk) => {
        output += chunk;
        // Kept for a failed run's post-mortem (the worker's warnings say which step stalled).
        appendFileSync(workerLog, chunk);
      },
      ready: async () => {
        while (!output.includes('authcap worker:')) await new Promise((r) => setTimeout(r, 100));
      },
    });
  };
  let worker = await spawnWorker();
  const client = await AuthcapClient.connect({
    ...loadTemporalSettings({ address: dev().temporalAddress, namespace: dev().temporalNamespace }),
    taskQueue,
  });
  const owner = keyAt(0);
  const ownerWallet = createWalletClient({ chain, transport, account: mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 0 }) });
  const isolated: IsolatedChain = {
    anvil,
    network: networkOfChainId(anvil.chainId),
    workerRpcUrl,
    tokenAddress,
    merchant,
    owner,
    payers: accounts.payers,
    taskQueue,
    client,
    worker,
    publicClient: publicClient as never,
    testClient: testClient as never,
    ownerWallet: ownerWallet as never,
    async setMining(on) {
      // evm_setIntervalMining takes whole seconds: resumed mining is 1 s blocks.
      if (!on) await testClient.setAutomine(false);
      await testClient.setIntervalMining({ interval: on ? 1 : 0 });
    },
    async restartWorker() {
      await worker.stop();
      worker = await spawnWorker();
      isolated.worker = worker;
    },
    async stop() {
      await client.close().catch(() => undefined);
      await worker.stop().catch(() => undefined);
      await proxy?.close().catch(() => undefined);
      await anvil.stop().catch(() => undefined);
    },
  };
  return isolated;
}

export async function isolatedBalance(chain: IsolatedChain, account: Address): Promise<bigint> {
  return chain.publicClient.readContract({ address: chain.tokenAddress, abi: tokenAbi, functionName: 'balanceOf', args: [account] }) as Promise<bigint>;
}
