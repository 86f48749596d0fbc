// The one place that composes everything: Temporal dev server, anvil and the token (one network or
// two: devNetworks.ts), the deployment configuration every process reads (deploymentFile.ts), the
// worker and the HTTP API. `npm start` runs it on fixed ports; the test suite runs it on free ones.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { createPublicClient, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DefaultLogger, Runtime, type WorkflowBundleOption } from '@temporalio/worker';
import { ApiKeyStore, createDevKeys } from '../client/apiKeys.js';
import { AuthcapClient } from '../client/authcapClient.js';
import { setLogLevel } from '../runtime/logger.js';
import { createApiServer, listen } from '../api/server.js';
import { codecOf, ensureDevCodecKeys } from '../runtime/codec.js';
import { startCodecServer } from '../runtime/codecServer.js';
import { sameLocalUser } from './localPeer.js';
import { processCounts, startAppProcesses } from './appProcesses.js';
import { freePort, type ManagedProcess } from './process.js';
import { loadTemporalSettings, type TemporalSettings } from '../runtime/temporal.js';
import { createAuthcapWorker, type AuthcapWorker } from '../worker/createWorker.js';
import { chainPolicyOf } from '../worker/config.js';
import type { Settings } from '../runtime/settings/catalog.js';
import { readSettings } from '../runtime/settings/read.js';
import { tracingPluginFromEnv } from '../runtime/tracing.js';
import { webhookAddressPolicyFromEnv } from '../runtime/webhookAddressPolicy.js';
import { devChainOptions, startDevChain, type DevNetwork, type DevNetworkCount } from './devNetworks.js';
import { devJsonNetworks, devStackDeployment, givenDeploymentFile, operatorStackDeployment, servedTokens } from './deploymentFile.js';
import { ensureDevWebhook, type DevWebhook } from './webhook.js';
import { demoPayersFromEnv } from './externalChain.js';
import { devAccounts } from './token.js';
import { startEmbeddedTemporal, type TemporalTopology } from './embeddedTemporal.js';
import type { TemporalOnPostgres } from './temporalOnPostgres.js';
import { operatorTemporalAccess, type OperatorTemporalAccess } from './temporalProfile.js';

export interface DevJson {
  /** The first API process; every one is in apiUrls (they share keys and idempotency records). */
  apiUrl: string;
  apiUrls: string[];
  /** An order-service key (create, sign, capture, cancel, void, read). */
  apiKey: string;
  /** An operator key (void, read, list). */
  operatorApiKey: string;
  /** An x402 facilitator key: POST /x402/verify and /x402/settle, GET /x402/supported, nothing else. */
  facilitatorApiKey: string;
  /** The codec server's base (with its token): `${codecUrl}/decode` and `/encode`. */
  codecUrl: string;
  /** The same server without the token (what the Web UI is given): decodes for this OS user only, on Linux. */
  codecEndpoint: string;
  /** The worker process's Prometheus metrics (its /readyz beside them); null when the worker runs in-process. */
  workerMetricsUrl: string | null;
  rpcUrl: string;
  chainId: number;
  tokenAddress: Address;
  tokenOwner: { address: Address; privateKey: Hex } | null;
  merchantAddress: Address;
  /** Every merchant key's address (the first is merchantAddress). */
  merchantAddresses: Address[];
  /** Anvil's funded demo payers; on an external chain, those of AUTHCAP_DEMO_PAYER_KEYS (else none). */
  payers: { address: Address; privateKey: Hex }[];
  temporalAddress: string;
  temporalNamespace: string;
  temporalUiUrl: string | null;
  /**
   * The production shape's Web UI asks for an operator token (a bearer, or its login page's cookie):
   * the file it is kept in (0600). null where the UI asks for none (the dev server's).
   */
  temporalUiTokenFile: string | null;
  /** The embedded Temporal the stack runs (dev server or server on PostgreSQL), or "external" (TEMPORAL_ADDRESS). */
  temporalTopology: TemporalTopology | 'external';
  /**
   * The production shape's mutual TLS, as the operator CLI connects (the same files as the
   * TEMPORAL_TLS_* variables of @temporalio/envconfig and the temporal CLI); null on the dev server.
   */
  temporalTls: OperatorTemporalAccess['temporalTls'] | null;
  /** A temporal.toml whose default profile is all of the above (TEMPORAL_CONFIG_FILE); null on the dev server. */
  temporalConfigFile: string | null;
  /** The endpoint registered from AUTHCAP_WEBHOOK_URL, with its signing secret; null without one. */
  webhook: DevWebhook | null;
  /** The deployment configuration the worker and API run on (AUTHCAP_CONFIG): written by the stack, or the operator's own. */
  configFile: string;
  /** Every network served, its tokens as the chain reports them; the first is the one rpcUrl and tokenAddress describe. */
  networks: DevNetwork[];
  /**
   * On anvil, the merchant keys under the variables configFile names, as the workers are given them,
   * so `npx authcap doctor` beside the stack checks what they check; null on an operator's chain
   * (their keys stay in their environment).
   */
  merchantKeyEnv: Record<string, string> | null;
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
  /** Run the worker and the API as their own OS processes (npm start), not inside this one (tests). */
  separateProcesses?: boolean;
  /** Merchant keys on the dev chain (default AUTHCAP_MERCHANT_KEYS, else 1): each has its own relayer. */
  merchantKeys?: number;
  codecPort?: number;
  /** The embedded Temporal server's Prometheus port (the bench reads it); else a random one. */
  temporalMetricsPort?: number;
  /** Registered as a webhook endpoint for every event (default AUTHCAP_WEBHOOK_URL). */
  webhookUrl?: string;
  /** The embedded Temporal: the dev server, or the Temporal server on PostgreSQL (default AUTHCAP_TEMPORAL, else dev). */
  temporal?: TemporalTopology;
  /** Worker and API processes with separateProcesses (default AUTHCAP_WORKERS / AUTHCAP_APIS, else 2 each on postgres, 1 on dev). */
  workers?: number;
  apis?: number;
  /**
   * The dev stack's settings, read once by the process that runs it (devstack/main.ts); default:
   * read here from this process's environment (an embedded stack: the test suites, the bench).
   */
  settings?: Settings<'dev-stack'>;
  /**
   * The worker settings the stack's chain policy is made of (and its in-process worker's), read with
   * `settings`; default: read here, after the dev stack's own default for AUTHCAP_WEBHOOK_ALLOW_LOOPBACK (on).
   */
  workerSettings?: Settings<'worker'>;
  /** Ports of the second and later API processes (default apiPort + 1, + 2…). */
  moreApiPorts?: number[];
  /**
   * Networks on the dev chain (default 1; npm start: AUTHCAP_DEV_NETWORKS): 2 adds a second anvil,
   * chain 31338, with USDC and the 18-decimal DEUR18. Ignored on an operator's chain.
   */
  networks?: DevNetworkCount;
  /** anvil ports of the second network (default rpcPort + 1). */
  moreRpcPorts?: number[];
  log?: (line: string) => void;
}

export interface Stack {
  devJson: DevJson;
  client: AuthcapClient;
  /** The in-process worker; undefined when it runs as its own process. */
  worker?: AuthcapWorker;
  /** The processes the stack started (absent when it runs in-process or uses an external service). */
  processes: StackProcesses;
  /** Every worker process's /metrics (empty when the worker runs in-process). */
  workerMetricsUrls: string[];
  /** The embedded Temporal on PostgreSQL, for the fault cases that restart its parts. */
  temporalCluster?: TemporalOnPostgres;
  stop(): Promise<void>;
}

export interface StackProcesses {
  /** The first worker and API (every one is in workers and apis). */
  worker?: ManagedProcess;
  api?: ManagedProcess;
  workers?: ManagedProcess[];
  apis?: ManagedProcess[];
  temporal?: ManagedProcess;
  /** The Web UI's own process (the production shape; the dev server serves its UI itself). */
  temporalUi?: ManagedProcess;
  /** The first network's anvil; every network's is in anvils. */
  anvil?: ManagedProcess;
  anvils?: ManagedProcess[];
}

let runtimeInstalled = false;

export async function startStack(options: StackOptions): Promise<Stack> {
  const log = options.log ?? ((line: string) => console.log(line));
  const settings = options.settings ?? readSettings('dev-stack');
  // A local receiver (AUTHCAP_WEBHOOK_URL=http://127.0.0.1:…) is the dev stack's usual webhook: allow
  // loopback for its processes, never private or metadata addresses. AUTHCAP_WEBHOOK_ALLOW_LOOPBACK=0 refuses it too.
  process.env.AUTHCAP_WEBHOOK_ALLOW_LOOPBACK ??= '1';
  // The in-process worker's policy and the operator's chain config take the worker's own settings.
  const workerSettings = options.workerSettings ?? readSettings('worker');
  // Everything in the state dir is private to this user: keys, the chain, Temporal's database.
  const previousUmask = process.umask(0o077);
  mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
  chmodSync(options.stateDir, 0o700);
  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger(temporalLogLevel(settings.AUTHCAP_LOG_LEVEL)) });
    runtimeInstalled = true;
  }
  // The in-process API's loggers log at the stack's level, when it names one.
  if (settings.AUTHCAP_LOG_LEVEL) setLogLevel(settings.AUTHCAP_LOG_LEVEL);
  const stops: (() => Promise<void>)[] = [() => Promise.resolve(void process.umask(previousUmask))];
  const stop = async () => {
    for (const fn of stops.reverse()) await fn().catch((err) => log(`authcap: while stopping: ${(err as Error).message}`));
    stops.length = 0;
  };
  try {
    // Payload encryption: the operator's keys, else the dev stack's own (kept in the state dir), put in
    // this process's environment for the processes it starts and the clients it makes.
    const devKeys =
      !settings.AUTHCAP_CODEC_KEYS && !settings.AUTHCAP_CODEC_KEY_FILE && settings.AUTHCAP_CODEC !== 'off' ? ensureDevCodecKeys(options.stateDir) : undefined;
    if (devKeys) process.env.AUTHCAP_CODEC_KEYS = devKeys;
    const codec = codecOf(devKeys ? { AUTHCAP_CODEC_KEYS: devKeys } : settings);
    const codecToken = devSecret(options.stateDir, 'codec-token');
    // Only the UI's own origin: it listens on 127.0.0.1 alone, so http://localhost:<port> could be
    // another user's server on ::1, whose pages the operator's browser would send here.
    const uiOrigins = [`http://127.0.0.1:${options.temporalUiPort}`];
    const codecServer = codec
      ? await startCodecServer({
          port: options.codecPort ?? (await freePort()),
          codec,
          token: codecToken,
          allowedOrigins: uiOrigins,
          // The UI publishes its codec endpoint to anyone (GET /api/v1/settings): the URL it gets
          // carries no secret, and the server decodes without one only for this OS user.
          trustRequest: sameLocalUser(uiOrigins),
          onError: (err) => log(`authcap: codec server: ${err.message}`),
        })
      : undefined;
    if (codecServer) stops.push(() => codecServer.close());
    const codecUrl = codecServer ? `${codecServer.url}/${codecToken}` : '';
    const codecEndpoint = codecServer?.url ?? '';

    // Temporal: a cluster named by envconfig (TEMPORAL_ADDRESS…), else the embedded dev server.
    const processes: Stack['processes'] = {};
    let temporal: TemporalSettings;
    let temporalUiUrl: string | null = null;
    let temporalUiTokenFile: string | null = null;
    let topology: DevJson['temporalTopology'] = 'external';
    let temporalCluster: TemporalOnPostgres | undefined;
    if (settings.TEMPORAL_ADDRESS) {
      temporal = loadTemporalSettings({}, process.env);
    } else {
      topology = options.temporal ?? settings.AUTHCAP_TEMPORAL;
      const server = await startEmbeddedTemporal({
        topology,
        stateDir: options.stateDir,
        port: options.temporalPort,
        uiPort: options.temporalUiPort,
        persistent: options.persistent,
        headless: options.headless,
        metricsPort: options.temporalMetricsPort,
        sqlitePragmas: settings.AUTHCAP_SQLITE_PRAGMAS,
        dynamicConfig: settings.AUTHCAP_TEMPORAL_DYNAMIC_CONFIG,
        uiCodecEndpoint: codecEndpoint || undefined,
        log,
      });
      stops.push(() => server.stop());
      temporalCluster = server.postgres;
      if (server.ui) processes.temporalUi = server.ui;
      Object.defineProperty(processes, 'temporal', { enumerable: true, get: () => server.process });
      temporal = loadTemporalSettings({ address: server.address, namespace: server.namespace });
      temporalUiUrl = server.uiUrl;
      temporalUiTokenFile = server.uiToken?.file ?? null;
    }

    // Chain: the operator's deployment file (AUTHCAP_CONFIG) names theirs, else anvil with our token
    // and a deployment.json of the stack's own. Checked against the chains before anything serves: a
    // wrong id or token stops the start, with why.
    const givenFile = givenDeploymentFile(settings);
    const external = givenFile !== undefined;
    const devChain = external ? undefined : await startDevChain(devChainOptions(options, settings, workerSettings), stops);
    if (devChain) Object.assign(processes, { anvil: devChain.anvils[0]!.process, anvils: devChain.anvils.map((a) => a.process) });
    const { chainConfig, configFile, deployment, fileEnv } = devChain
      ? await devStackDeployment(options.stateDir, devChain)
      : await operatorStackDeployment(givenFile!, workerSettings);
    const accounts = devAccounts();
    const merchantAddress = privateKeyToAccount(chainConfig.merchantPrivateKey).address;
    const merchantAddresses = [
      ...new Set([chainConfig.merchantPrivateKey, ...(chainConfig.merchantPrivateKeys ?? [])].map((k) => privateKeyToAccount(k).address)),
    ];
    // Read before anything else starts: a malformed key stops the stack here, with why.
    const payers = external ? demoPayersFromEnv(merchantAddresses) : accounts.payers;

    const keyStore = ApiKeyStore.open(join(options.stateDir, 'api-keys.json'));
    const { apiKey, operatorApiKey, facilitatorApiKey } = createDevKeys(keyStore);
    let worker: AuthcapWorker | undefined;
    let apiUrl: string;
    let moreApiUrls: string[] = [];
    let workerMetricsUrl: string | null = null;
    let workerMetricsUrls: string[] = [];
    // The in-process API checks payers' signatures against the chain, as the API process does.
    // Its webhook address policy and tracing are this process's (the loopback allowance above), read here once.
    const tracing = tracingPluginFromEnv('authcap-client');
    const client = await AuthcapClient.connect(temporal, {
      rpcUrl: chainConfig.rpcUrl,
      deployment,
      webhookAddressPolicy: webhookAddressPolicyFromEnv(),
      plugins: tracing ? [tracing] : [],
    });
    stops.push(() => client.close());
    // The production shape's certificates: each process presents its own (the operator's in dev.json).
    const temporalTls = temporalCluster?.tls;

    if (options.separateProcesses) {
      const started = await startAppProcesses({
        stateDir: options.stateDir,
        temporal,
        temporalTls,
        configFile,
        fileEnv,
        merchantAddresses,
        counts: processCounts(options, topology, settings),
        // The production shape's own database, else the operator's (read now: the cluster above sets it).
        idempotencyDatabaseUrl: temporalCluster?.idempotencyDatabaseUrl ?? settings.AUTHCAP_IDEMPOTENCY_DATABASE_URL,
        workerMetricsPort: settings.AUTHCAP_WORKER_METRICS_PORT,
        apiHost: settings.AUTHCAP_API_HOST,
        apiPorts: (i) => (i === 0 ? options.apiPort : (options.moreApiPorts?.[i - 1] ?? options.apiPort + i)),
        validitySeconds: options.validitySeconds,
        captureWaitMs: options.captureWaitMs,
        log,
      });
      stops.push(() => started.stop());
      Object.assign(processes, { workers: started.workers, apis: started.apis, worker: started.workers[0], api: started.apis[0] });
      workerMetricsUrl = started.workerMetricsUrl;
      workerMetricsUrls = started.workerMetricsUrls;
      apiUrl = started.apiUrls[0]!;
      moreApiUrls = started.apiUrls.slice(1);
    } else {
      worker = await createAuthcapWorker({
        temporal,
        // The networks' confirmations are in the deployment file the stack wrote (options.confirmations included).
        policy: { ...chainPolicyOf(workerSettings), validitySeconds: options.validitySeconds ?? chainConfig.validitySeconds },
        deployment,
        workflowBundle: options.workflowBundle,
        watch: workerSettings.AUTHCAP_WATCH,
        settings: workerSettings,
      });
      const running = worker.run();
      const inProcess = worker;
      stops.push(async () => {
        await inProcess.shutdown();
        await running.catch(() => undefined);
      });
      const api: Server = createApiServer({
        client,
        keys: keyStore,
        idempotency: { dir: join(options.stateDir, 'idempotency') },
        captureWaitMs: options.captureWaitMs,
        forbiddenPayers: [
          ...servedTokens(chainConfig.tokenAddress, deployment).map((address) => ({ address, why: 'the token contract' })),
          ...merchantAddresses.map((address) => ({ address, why: 'the merchant itself' })),
        ],
        merchantAddresses,
        rpcUrl: chainConfig.rpcUrl,
        deployment,
        // Links handed out before a restart keep working: the same secret file as the API process.
        checkout: { stateDir: options.stateDir },
      });
      apiUrl = await listen(api, options.apiPort);
      stops.push(
        () =>
          new Promise<void>((resolve) => {
            api.closeAllConnections();
            api.close(() => resolve());
          }),
      );
    }

    const webhookUrl = options.webhookUrl ?? settings.AUTHCAP_WEBHOOK_URL;
    const webhook = webhookUrl ? await ensureDevWebhook(client, options.stateDir, webhookUrl) : null;
    const chainClient = createPublicClient({ transport: http(chainConfig.rpcUrl) });
    const chainId = await chainClient.getChainId();
    const devJson: DevJson = {
      apiUrl,
      apiUrls: [apiUrl, ...moreApiUrls],
      apiKey,
      operatorApiKey,
      facilitatorApiKey,
      codecUrl,
      codecEndpoint,
      workerMetricsUrl,
      rpcUrl: chainConfig.rpcUrl,
      chainId,
      tokenAddress: chainConfig.tokenAddress,
      tokenOwner: external ? null : accounts.tokenOwner,
      merchantAddress,
      merchantAddresses,
      payers,
      temporalAddress: temporal.connectionOptions.address!,
      temporalNamespace: temporal.namespace,
      temporalUiUrl,
      temporalUiTokenFile,
      temporalTopology: topology,
      ...(temporalTls
        ? operatorTemporalAccess(options.stateDir, { address: temporal.connectionOptions.address!, namespace: temporal.namespace, tls: temporalTls })
        : { temporalTls: null, temporalConfigFile: null }),
      webhook,
      configFile,
      networks: devJsonNetworks(deployment, chainId),
      merchantKeyEnv: external ? null : Object.fromEntries(Object.entries(fileEnv.worker).filter(([, value]) => value !== '')),
    };
    writeFileSync(join(options.stateDir, 'dev.json'), `${JSON.stringify(devJson, null, 2)}\n`, { mode: 0o600 });
    return { devJson, client, worker, processes, workerMetricsUrls, temporalCluster, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A random secret kept in the state dir (0600), the same across restarts of the dev stack. */
function devSecret(stateDir: string, name: string): string {
  const file = join(stateDir, name);
  if (!existsSync(file)) writeFileSync(file, randomBytes(24).toString('base64url'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/** The Temporal core's log level from AUTHCAP_LOG_LEVEL (the dev stack's: warnings unless asked). */
function temporalLogLevel(level: Settings<'dev-stack'>['AUTHCAP_LOG_LEVEL']): 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' {
  switch (level) {
    case 'trace':
    case 'debug':
    case 'info':
    case 'warn':
    case 'error':
      return level.toUpperCase() as 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
    case 'fatal':
    case 'silent':
      return 'ERROR';
    default:
      return 'WARN';
  }
}
