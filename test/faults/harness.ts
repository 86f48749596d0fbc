// The fault suite's world: every part its own OS process on 127.0.0.1, so a case can kill any of
// them — a Temporal dev server on a SQLite file, or the Temporal server on PostgreSQL (the postgres
// suite), anvil with our token behind a JSON-RPC fault proxy, worker processes and API processes —
// plus the audit every case ends with.
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createTestClient, createWalletClient, defineChain, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ApiKeyStore } from '../../client/apiKeys.js';
import { webhookAddressPolicyFromEnv } from '../../runtime/webhookAddressPolicy.js';
import { AuthcapClient } from '../../client/authcapClient.js';
import { startAnvil, type Anvil } from '../../devstack/anvil.js';
import { apiHostFiles, prepareHost, startApiProcess, startWorkerProcess, type Host } from '../../devstack/appProcesses.js';
import { freePort, type ManagedProcess } from '../../devstack/process.js';
import { startTemporalServer } from '../../devstack/temporalServer.js';
import { startTemporalOnPostgres, type TemporalOnPostgres } from '../../devstack/temporalOnPostgres.js';
import { deployDevToken, devAccounts } from '../../devstack/token.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { ensureDevCodecKeys } from '../../runtime/codec.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { startFaultProxy, type FaultProxy } from './faultProxy.js';
import { startSecondNetwork, writeTwoNetworkDeployment, type SecondNetwork } from './secondNetwork.js';
import { writeTestDeployment } from '../support/deploymentFile.js';
import { loadDeployment } from '../../runtime/deployment/load.js';
import { resolveDeployment, retryUnavailable } from '../../runtime/deployment/resolve.js';

export const FULL = process.env.FAULTS_FULL === '1';

/** The Temporal a world runs: what a case kills and restarts. */
export interface WorldTemporal {
  address: string;
  namespace: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

export interface World {
  stateDir: string;
  temporal: WorldTemporal;
  /** The Temporal server on PostgreSQL (postgres suite only). */
  cluster?: TemporalOnPostgres;
  temporalPort: number;
  anvil: Anvil;
  proxy: FaultProxy;
  tokenAddress: Address;
  merchant: { address: Address; privateKey: Hex };
  payers: { address: Address; privateKey: Hex }[];
  owner: { address: Address; privateKey: Hex };
  /** Each payer's token balance when the world started (lowercase address), and the block it was read at. */
  payerBalancesAtStart: Map<string, bigint>;
  startBlock: bigint;
  workers: ManagedProcess[];
  /** The environment startWorker gives a worker process (merchant key included), for one a case starts itself. */
  workerEnv: Record<string, string>;
  /** The first API process; all of them in apis, their URLs in apiUrls. */
  api?: ManagedProcess;
  apiUrl?: string;
  apis: ManagedProcess[];
  apiUrls: string[];
  /**
   * Each API's own state dir (and HOME) when every process is a host of its own (the production
   * shape: `<stateDir>/hosts/api-<n>`); the shared stateDir otherwise.
   */
  apiStateDirs: string[];
  /** The same for each worker started, in order of start. */
  workerStateDirs: string[];
  apiKey?: string;
  client: AuthcapClient;
  publicClient: ReturnType<typeof createPublicClient>;
  testClient: ReturnType<typeof createTestClient>;
  ownerWallet: ReturnType<typeof createWalletClient>;
  startWorker(): Promise<ManagedProcess>;
  /** SIGKILLs the Temporal server and starts it again on the same database. */
  restartTemporal(): Promise<void>;
  /** Restarts PostgreSQL under the running Temporal server (postgres suite only). */
  restartPostgres(): Promise<void>;
  /** Starts the first API again (after a kill) on its port, or a first one. */
  startApi(): Promise<void>;
  /** startWorld({ networks: 2 }): the second network, served by the same workers and API. */
  second?: SecondNetwork;
  /** The world as seen from the second network (its chain, token and proxy): what the audit reads. */
  onSecond(): World;
  stop(): Promise<void>;
}

export async function startWorld(
  options: {
    workers?: number;
    api?: boolean;
    apis?: number;
    validitySeconds?: number;
    payers?: number;
    env?: Record<string, string>;
    temporal?: 'dev' | 'postgres';
    /** 2: a second network (secondNetwork.ts) beside the first, in one deployment file. */
    networks?: 1 | 2;
    /** The second network's node does not answer when the worker and API start (its proxy drops every call until cleared). */
    secondDownAtStart?: boolean;
    /**
     * Each worker and API a host of its own (devstack/appProcesses.ts prepareHost): its own state
     * dir and HOME, its files copied in, its own Temporal certificate. Default: on 'postgres'.
     */
    separateHosts?: boolean;
  } = {},
): Promise<World> {
  const stateDir = mkdtempSync(join(tmpdir(), 'authcap-faults-'));
  const codecKeys = ensureDevCodecKeys(stateDir);
  process.env.AUTHCAP_CODEC_KEYS = codecKeys;
  // The cases' webhook receivers listen on 127.0.0.1 (registered from this process, delivered by the workers).
  process.env.AUTHCAP_WEBHOOK_ALLOW_LOOPBACK = '1';
  const temporalPort = await freePort();
  const dbFile = join(stateDir, 'temporal.db');
  const cluster =
    options.temporal === 'postgres' ? await startTemporalOnPostgres({ stateDir, port: temporalPort, namespace: 'authcap', log: () => undefined }) : undefined;
  const startTemporal = () => startTemporalServer({ port: temporalPort, dbFile, headless: true });
  let temporal: WorldTemporal = cluster ?? (await startTemporal());
  const anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0.2 });
  const chain = defineChain({
    id: anvil.chainId,
    name: 'faults',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  const accounts = devAccounts(options.payers ?? 16);
  const tokenAddress = await deployDevToken({ rpcUrl: anvil.rpcUrl, chain, accounts });
  const proxy = await startFaultProxy(anvil.rpcUrl);
  const transport = http(anvil.rpcUrl);
  // What each payer holds before authcap does anything: the audit checks each payer's change against it.
  const startReader = createPublicClient({ chain, transport });
  const startBlock = await startReader.getBlockNumber();
  const payerBalancesAtStart = new Map<string, bigint>();
  for (const p of accounts.payers) {
    const balance = (await startReader.readContract({
      address: tokenAddress,
      abi: tokenAbi,
      functionName: 'balanceOf',
      args: [p.address],
      blockNumber: startBlock,
    })) as bigint;
    payerBalancesAtStart.set(p.address.toLowerCase(), balance);
  }
  // Every process's output in the state dir (worker-1.log, api-1.log, …): what a failed case is read from.
  let started = 0;
  const logTo = (name: string) => {
    started += 1;
    const file = createWriteStream(join(stateDir, `${name}-${started}.log`), { flags: 'a' });
    file.on('error', () => undefined);
    return (chunk: string) => void file.write(chunk);
  };
  const second = options.networks === 2 ? await startSecondNetwork(accounts) : undefined;
  if (second && options.secondDownAtStart) second.proxy.set('drop', 1);
  // Every process through the fault proxy; one network's file takes a case's AUTHCAP_CONFIRMATIONS.
  const configFile = second
    ? writeTwoNetworkDeployment(stateDir, { chainId: anvil.chainId, proxyUrl: proxy.url, tokenAddress }, second)
    : writeTestDeployment(stateDir, { chainId: anvil.chainId, rpcUrl: proxy.url, tokenAddress }, options.env);
  const env: Record<string, string> = {
    AUTHCAP_CONFIG: configFile,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    AUTHCAP_STATE_DIR: stateDir,
    AUTHCAP_CODEC_KEYS: codecKeys,
    AUTHCAP_RECONCILE_SECONDS: '2',
    AUTHCAP_WATCH: '0',
    AUTHCAP_VALIDITY_SECONDS: String(options.validitySeconds ?? 900),
    ...options.env,
  };
  const separateHosts = options.separateHosts ?? options.temporal === 'postgres';
  const hosts: Host[] = [];
  const workerStateDirs: string[] = [];
  const apiStateDirs: string[] = [];
  // A host's env over the shared one; without separate hosts, the shared state dir as before.
  const hostEnv = (name: string, identity: 'worker' | 'api'): Record<string, string> => {
    if (!separateHosts) return {};
    const files = identity === 'api' ? apiHostFiles(stateDir) : [];
    const host = prepareHost({ stateDir, name, configFile, tls: cluster ? { tls: cluster.tls, identity } : undefined, files });
    hosts.push(host);
    return {
      ...host.env,
      ...(identity === 'api' && cluster ? { AUTHCAP_IDEMPOTENCY_DATABASE_URL: cluster.idempotencyDatabaseUrl } : {}),
    };
  };
  const workers: ManagedProcess[] = [];
  const workerEnv = { ...env, MERCHANT_PRIVATE_KEY: accounts.merchant.privateKey };
  const startWorker = async () => {
    const own = hostEnv(`worker-${workerStateDirs.length + 1}`, 'worker');
    workerStateDirs.push(own.AUTHCAP_STATE_DIR ?? stateDir);
    const worker = await startWorkerProcess({ ...workerEnv, ...own }, logTo('worker'));
    workers.push(worker);
    return worker;
  };
  for (let i = 0; i < (options.workers ?? 1); i += 1) await startWorker();
  // As the API resolves it: a network whose node is down waits, and is brought in once it answers.
  const deployment = second ? await resolveDeployment(loadDeployment({ AUTHCAP_CONFIG: configFile }, { keys: false }), { degraded: true }) : undefined;
  const retrying = deployment?.unavailable.length ? retryUnavailable(deployment, { intervalMs: 500, maxIntervalMs: 2_000 }) : undefined;
  // The harness's receivers are on this machine (AUTHCAP_WEBHOOK_ALLOW_LOOPBACK above), as under npm start.
  const client = await AuthcapClient.connect(loadTemporalSettings({ address: temporal.address, namespace: temporal.namespace }), {
    deployment,
    webhookAddressPolicy: webhookAddressPolicyFromEnv(),
  });
  const startApiAt = async (port: number, index = 0) => {
    const keys = ApiKeyStore.open(join(stateDir, 'api-keys.json'));
    world.apiKey ??= keys.create('order-service', 'faults').key;
    // A restarted API is the same host again: its state dir is kept.
    const own = hostEnv(`api-${index + 1}`, 'api');
    apiStateDirs[index] = own.AUTHCAP_STATE_DIR ?? stateDir;
    return startApiProcess({ ...env, ...own, AUTHCAP_API_PORT: String(port), AUTHCAP_MERCHANT_ADDRESS: accounts.merchant.address }, logTo('api'));
  };
  const world: World = {
    stateDir,
    temporal,
    cluster,
    temporalPort,
    anvil,
    proxy,
    tokenAddress,
    merchant: accounts.merchant,
    payers: accounts.payers,
    owner: accounts.tokenOwner,
    payerBalancesAtStart,
    startBlock,
    workers,
    workerEnv,
    client,
    apis: [],
    apiUrls: [],
    apiStateDirs,
    workerStateDirs,
    publicClient: createPublicClient({ chain, transport, pollingInterval: 100 }) as never,
    testClient: createTestClient({ chain, transport, mode: 'anvil' }) as never,
    ownerWallet: createWalletClient({ chain, transport, account: privateKeyToAccount(accounts.tokenOwner.privateKey) }) as never,
    startWorker,
    second,
    onSecond() {
      if (!second) throw new Error('this world has one network');
      const { anvil: a, proxy: p, tokenAddress: t, payerBalancesAtStart: b, startBlock: s, publicClient, testClient, ownerWallet } = second;
      return { ...world, anvil: a, proxy: p, tokenAddress: t, payerBalancesAtStart: b, startBlock: s, publicClient, testClient, ownerWallet };
    },
    async restartTemporal() {
      if (cluster) {
        await cluster.restartServer({ kill: true });
        return;
      }
      await temporal.process.child.kill('SIGKILL');
      await temporal.process.exited;
      temporal = await startTemporal();
      world.temporal = temporal;
    },
    async restartPostgres() {
      if (!cluster) throw new Error('this world runs the dev server: no PostgreSQL to restart');
      await cluster.restartPostgres();
    },
    async startApi() {
      const port = world.apiUrl ? Number(new URL(world.apiUrl).port) : await freePort();
      world.api = await startApiAt(port);
      world.apiUrl = `http://127.0.0.1:${port}`;
      world.apis[0] = world.api;
      world.apiUrls[0] = world.apiUrl;
    },
    async stop() {
      retrying?.stop();
      await client.close().catch(() => undefined);
      for (const api of world.apis) await api.stop().catch(() => undefined);
      for (const worker of workers) await worker.stop().catch(() => undefined);
      await proxy.close().catch(() => undefined);
      await anvil.stop().catch(() => undefined);
      await second?.stop();
      await temporal.stop().catch(() => undefined);
      for (const host of hosts) host.stop();
      // ~10 MB a case (Temporal's database, the processes' logs): kept only when asked for, to read
      // a failure's logs; left behind, a run's cases filled /tmp over many runs.
      if (process.env.AUTHCAP_KEEP_FAULT_STATE === '1') console.log(`faults: state kept in ${stateDir}`);
      else rmSync(stateDir, { recursive: true, force: true });
    },
  };
  if (options.api || (options.apis ?? 0) > 0) await world.startApi();
  for (let i = 1; i < (options.apis ?? 0); i += 1) {
    const port = await freePort();
    world.apis.push(await startApiAt(port, i));
    world.apiUrls.push(`http://127.0.0.1:${port}`);
  }
  return world;
}

/** SIGKILL: no goodbye, no cleanup — what a crashed host does. */
export async function kill(proc: ManagedProcess): Promise<void> {
  proc.child.kill('SIGKILL');
  await proc.exited;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch(() => undefined as T);
    if ((value !== undefined && ok(value)) || Date.now() > until) return value;
    await sleep(250);
  }
}
