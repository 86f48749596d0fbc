// The one place that composes everything: Temporal dev server, anvil and the token, the worker and
// the HTTP API. `npm start` runs it on fixed ports; the test suite runs it on free ones.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { createPublicClient, defineChain, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DefaultLogger, Runtime, type WorkflowBundleOption } from '@temporalio/worker';
import { AuthcapClient } from '../client/authcapClient.js';
import { createApiServer, listen } from '../client/http/server.js';
import { loadTemporalSettings, type TemporalSettings } from '../runtime/temporal.js';
import { createAuthcapWorker, type AuthcapWorker } from '../worker/createWorker.js';
import { chainConfigFromEnv, watcherConfigFromEnv } from '../worker/config.js';
import { startAnvil, type Anvil } from './anvil.js';
import { deployDevToken, devAccounts } from './token.js';
import { startTemporalServer, type TemporalServer } from './temporalServer.js';

export interface DevJson {
  apiUrl: string;
  apiKey: string | null;
  rpcUrl: string;
  chainId: number;
  tokenAddress: Address;
  tokenOwner: { address: Address; privateKey: Hex } | null;
  merchantAddress: Address;
  payers: { address: Address; privateKey: Hex }[];
  temporalAddress: string;
  temporalNamespace: string;
  temporalUiUrl: string | null;
}

export interface StackOptions {
  stateDir: string;
  apiPort: number;
  rpcPort: number;
  temporalPort: number;
  temporalUiPort: number;
  /** Keep Temporal's SQLite file and anvil's state in stateDir across restarts (npm start). */
  persistent: boolean;
  /** No Web UI (tests). */
  headless?: boolean;
  blockTimeSeconds?: number;
  validitySeconds?: number;
  confirmations?: number;
  workflowBundle?: WorkflowBundleOption;
  captureWaitMs?: number;
  log?: (line: string) => void;
}

export interface Stack {
  devJson: DevJson;
  client: AuthcapClient;
  worker: AuthcapWorker;
  stop(): Promise<void>;
}

let runtimeInstalled = false;

export async function startStack(options: StackOptions): Promise<Stack> {
  const log = options.log ?? ((line: string) => console.log(line));
  mkdirSync(options.stateDir, { recursive: true });
  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger((process.env.AUTHCAP_LOG_LEVEL as 'INFO' | undefined) ?? 'WARN') });
    runtimeInstalled = true;
  }
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const fn of stops.reverse()) await fn().catch((err) => log(`authcap: while stopping: ${(err as Error).message}`));
    stops.length = 0;
  };
  try {
    // Temporal: a cluster named by envconfig (TEMPORAL_ADDRESS…), else the embedded dev server.
    let temporal: TemporalSettings;
    let temporalUiUrl: string | null = null;
    if (process.env.TEMPORAL_ADDRESS) {
      temporal = loadTemporalSettings();
    } else {
      const server: TemporalServer = await startTemporalServer({
        port: options.temporalPort,
        uiPort: options.temporalUiPort,
        dbFile: options.persistent ? join(options.stateDir, 'temporal.db') : undefined,
        headless: options.headless,
        log,
      });
      stops.push(() => server.stop());
      temporal = loadTemporalSettings({ address: server.address, namespace: server.namespace });
      temporalUiUrl = server.uiUrl;
    }

    // Chain: RPC_URL + TOKEN_ADDRESS + MERCHANT_PRIVATE_KEY name a real one, else anvil with our token.
    const external = Boolean(process.env.RPC_URL && process.env.TOKEN_ADDRESS && process.env.MERCHANT_PRIVATE_KEY);
    const chainConfig = external
      ? chainConfigFromEnv()
      : await startDevChain(options, stops);
    const accounts = devAccounts();

    const worker: AuthcapWorker = await createAuthcapWorker({
      temporal,
      chain: {
        ...chainConfig,
        validitySeconds: options.validitySeconds ?? chainConfig.validitySeconds,
        confirmations: options.confirmations ?? chainConfig.confirmations,
      },
      workflowBundle: options.workflowBundle,
      watcher: watcherConfigFromEnv(chainConfig.rpcUrl, options.stateDir),
    });
    const running = worker.run();
    stops.push(async () => {
      await worker.shutdown();
      await running.catch(() => undefined);
    });

    const client = await AuthcapClient.connect(temporal);
    stops.push(() => client.close());
    const apiKey = process.env.AUTHCAP_API_KEY || null;
    const api: Server = createApiServer({ client, apiKey, captureWaitMs: options.captureWaitMs });
    const apiUrl = await listen(api, options.apiPort);
    stops.push(() => new Promise<void>((resolve) => {
      api.closeAllConnections();
      api.close(() => resolve());
    }));

    const chainClient = createPublicClient({ transport: http(chainConfig.rpcUrl) });
    const devJson: DevJson = {
      apiUrl,
      apiKey,
      rpcUrl: chainConfig.rpcUrl,
      chainId: await chainClient.getChainId(),
      tokenAddress: chainConfig.tokenAddress,
      tokenOwner: external ? null : accounts.tokenOwner,
      merchantAddress: privateKeyToAccount(chainConfig.merchantPrivateKey).address,
      payers: external ? [] : accounts.payers,
      temporalAddress: temporal.connectionOptions.address!,
      temporalNamespace: temporal.namespace,
      temporalUiUrl,
    };
    writeFileSync(join(options.stateDir, 'dev.json'), `${JSON.stringify(devJson, null, 2)}\n`, { mode: 0o600 });
    return { devJson, client, worker, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startDevChain(options: StackOptions, stops: (() => Promise<void>)[]) {
  const anvil: Anvil = await startAnvil({
    port: options.rpcPort,
    blockTimeSeconds: options.blockTimeSeconds ?? 0.2,
    stateFile: options.persistent ? join(options.stateDir, 'anvil-state.json') : undefined,
  });
  stops.push(() => anvil.stop());
  const accounts = devAccounts();
  const chain = defineChain({
    id: anvil.chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  const tokenAddress = await deployDevToken({ rpcUrl: anvil.rpcUrl, chain, accounts });
  return chainConfigFromEnv({
    ...process.env,
    RPC_URL: anvil.rpcUrl,
    TOKEN_ADDRESS: tokenAddress,
    MERCHANT_PRIVATE_KEY: accounts.merchant.privateKey,
  });
}
