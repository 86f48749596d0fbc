// Builds the authcap worker: workflows bundled from workflows/, activities bound to the chain.
import { retryUnavailable, type ResolvedDeployment } from '../runtime/deployment/resolve.js';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { EncryptionCodec } from '../runtime/codec.js';
import { Client } from '@temporalio/client';
import { existsSync } from 'node:fs';
import { NativeConnection, Worker, type WorkerOptions, type WorkflowBundleOption } from '@temporalio/worker';
import { followTaskQueue } from '../domain/taskQueues.js';
import { relayerWorkflowId, type RelayRequest } from '../domain/relay.js';
import { relayRequestSignal } from '../workflows/messages.js';
import type { merchantRelayerWorkflow as RelayerWorkflow } from '../workflows/relayer.js';
import { createChainWatchActivities } from './chainWatchActivity.js';
import { startOwnWorkflows } from './ownWorkflows.js';
import type { DeploymentVersion } from '../runtime/workerDeployment.js';
import { eventBridges } from './eventBridges.js';
import type { RpcMetrics } from '../activities/rpc/rpcMetrics.js';
import { ChainContexts, createActivities, createNetworkContexts, type ChainContext, type ChainPolicy } from '../activities/index.js';
import { chainHeaderInbound } from './chainHeaderInbound.js';
import { rpcCalls, rpcErrors, startMetricsServer, telemetrySinks } from './telemetry.js';
import { tracingPluginOf } from '../runtime/tracing.js';
import { sealedActivityInputs } from './sealedActivityInputs.js';
import type { TaskFailureTracker } from './taskFailures.js';
import type { TemporalSettings } from '../runtime/temporal.js';
import type { Settings } from '../runtime/settings/catalog.js';
import { webhookAddressPolicyOf } from '../runtime/webhookAddressPolicy.js';
import { getAddress } from 'viem';
import { sharedWorkflowModules } from './workflowBundle.js';
import type { EscrowAddresses } from '../domain/escrow.js';

/** The worker settings createAuthcapWorker is made of: its process's entry read them (readSettings('worker')). */
export type WorkerProcessSettings = Pick<
  Settings<'worker'>,
  | 'AUTHCAP_ACTIVITY_SLOTS'
  | 'AUTHCAP_FOLLOWER_SLOTS'
  | 'AUTHCAP_WORKFLOW_CACHE_SIZE'
  | 'AUTHCAP_PROFILE_WORKFLOWS'
  | 'AUTHCAP_WEBHOOK_ALLOW_LOOPBACK'
  | 'AUTHCAP_WEBHOOK_ALLOW_PRIVATE'
  | 'OTEL_EXPORTER_OTLP_ENDPOINT'
  | 'OTEL_SERVICE_NAME'
>;

// Run from the build (dist/), this file is JavaScript and the workflows beside it too.
const compiled = import.meta.url.endsWith('.js');
export const workflowsPath = fileURLToPath(new URL(`../workflows/index.${compiled ? 'js' : 'ts'}`, import.meta.url));
/** Bundled with the workflows (scripts/build.ts does the same for dist/): every input must be sealed. */
export const workflowInterceptorModules = [fileURLToPath(new URL(`../workflows/interceptors.${compiled ? 'js' : 'ts'}`, import.meta.url))];
/** The bundle `npm run build` made (dist/workflow-bundle.js): absent when running from source. */
const prebuiltBundlePath = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

export interface AuthcapWorkerOptions {
  temporal: TemporalSettings;
  /** The policy every network shares: validity windows, history limit, reconcile interval (worker/config.ts). */
  policy: ChainPolicy;
  /**
   * The networks and tokens to serve, checked against their chains (runtime/deployment/): every
   * network gets its own clients, relayers, head feed and log watcher.
   */
  deployment: ResolvedDeployment;
  /** A prebuilt bundle (tests build one per run); by default the worker bundles workflows/ itself. */
  workflowBundle?: WorkflowBundleOption;
  /**
   * Make sure each network's log watcher runs (AUTHCAP_WATCH): one per network and task queue, on
   * whichever worker Temporal gives it to (workflows/chainWatcher.ts).
   */
  watch: boolean;
  /** Serve Prometheus metrics at http://127.0.0.1:<port>/metrics (0: a free port). */
  metricsPort?: number;
  /** Failed workflow tasks seen by the runtime logger (worker/main.ts installs it): listed at /readyz. */
  taskFailures?: TaskFailureTracker;
  /** Slots, cache size, profiling, where webhooks may go and tracing, as its process's entry read them. */
  settings: WorkerProcessSettings;
  /**
   * Temporal's worker versioning (runtime/workerDeployment.ts): this worker is that version of its
   * deployment and gets tasks only while the version is current. Absent: an unversioned worker.
   */
  version?: DeploymentVersion;
}

export interface AuthcapWorker {
  worker: Worker;
  /** What this worker has asked of the node so far. */
  /** The first network's: what this worker has asked of its node so far. */
  rpcMetrics: RpcMetrics;
  rpcMetricsByNetwork: ReadonlyMap<string, RpcMetrics>;
  connection: NativeConnection;
  /** Where this worker's Prometheus metrics answer, when metricsPort was given. */
  metricsUrl?: string;
  /** Runs until shutdown() is called. */
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

export async function createAuthcapWorker(options: AuthcapWorkerOptions): Promise<AuthcapWorker> {
  const { settings } = options;
  const contexts = new ChainContexts(await chainContextsOf(options));
  // Each network its own failure domain: one whose node did not answer at start waits (its activities
  // fail with a retryable chain_unavailable) and is asked again in the background; once its node
  // answers (and is the chain its id names), it serves, with no restart.
  for (const waiting of options.deployment.unavailable) {
    contexts.unavailable(waiting.network, waiting.reason);
    console.warn(`authcap worker: ${waiting.network} waits for its node: ${waiting.reason}`);
  }
  const retrying =
    options.deployment.unavailable.length > 0
      ? retryUnavailable(options.deployment, {
          onResolved: (network) => {
            contexts.available(network.network);
            console.warn(`authcap worker: ${network.network} answers: served from now on`);
          },
          log: (line) => console.warn(`authcap worker: ${line}`),
        })
      : undefined;
  const networks = contexts.networks();
  for (const ctx of networks) {
    ctx.rpcMetrics.listeners.call = (method) => rpcCalls.inc({ network: ctx.network, method });
    ctx.rpcMetrics.listeners.error = (method) => rpcErrors.inc({ network: ctx.network, method });
  }
  const chain = contexts.defaultContext;
  const connection = await NativeConnection.connect(options.temporal.connectionOptions);
  const { namespace, taskQueue } = options.temporal;
  const client = new Client({ connection, namespace, dataConverter: options.temporal.dataConverter });
  // Signal-with-start: the merchant's relayer exists from the first transaction on, whichever worker
  // process asks first, and Temporal guarantees there is only ever one per merchant key and network.
  const requestRelay = async (request: RelayRequest, ctx: ChainContext) => {
    await client.workflow.signalWithStart<typeof RelayerWorkflow, [RelayRequest]>('merchantRelayerWorkflow', {
      // Each merchant key has its own relayer on each network: the one the transaction must be sent by.
      workflowId: relayerWorkflowId(ctx.senderFor(request.sender), ctx.network),
      taskQueue,
      args: [{ accountNonce: null, inflight: [], answered: [] }],
      signal: relayRequestSignal,
      signalArgs: [request],
    });
  };
  // A bundle carries its workflow interceptors (built with them); bundling here adds them.
  const { workflowModules, ...code } = workflowCode(options.workflowBundle, settings);
  const addressPolicy = webhookAddressPolicyOf(settings);
  const activities = {
    ...createActivities(contexts, {
      requestRelay,
      events: { ...eventBridges(client), addressPolicy: () => addressPolicy },
      draftNonceKeys: draftNonceKeysOf(options.temporal),
    }),
    // Every worker can run any network's watcher: the one Temporal hands it to.
    ...createChainWatchActivities({
      client,
      contexts,
      wsUrlOf: (network) => networkWsUrl(options.deployment, network),
    }),
  };
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    activities,
    maxConcurrentActivityTaskExecutions: settings.AUTHCAP_ACTIVITY_SLOTS,
    dataConverter: options.temporal.dataConverter,
    interceptors: { activity: [sealedActivityInputs, chainHeaderInbound], ...(workflowModules ? { workflowModules } : {}) },
    sinks: telemetrySinks(chain.network),
    // Open authorizations mostly wait on a timer: bound the cache so memory does not grow with them
    // (an evicted one is replayed from its short history when a message or its deadline arrives).
    maxCachedWorkflows: settings.AUTHCAP_WORKFLOW_CACHE_SIZE,
    // Workflows in the main thread, so a CPU profile sees them (slower: for profiling only).
    debugMode: settings.AUTHCAP_PROFILE_WORKFLOWS,
    ...versioning(options.version),
    ...code,
  });
  // The long waits (captures followed to depth, webhook dispatchers) have their own queue and slots:
  // they are mostly idle, so many fit in one process, and none can starve the relayer of a slot.
  const followWorker = await Worker.create({
    connection,
    namespace,
    taskQueue: followTaskQueue(taskQueue),
    activities,
    dataConverter: options.temporal.dataConverter,
    interceptors: { activity: [sealedActivityInputs, chainHeaderInbound] },
    maxConcurrentActivityTaskExecutions: settings.AUTHCAP_FOLLOWER_SLOTS,
    // The same version on both queues: a workflow's activities go to its own version's workers.
    ...versioning(options.version),
  });
  // One log watcher per network, reading all of its tokens in the same calls: started by the first
  // worker to come up, then kept by Temporal on whichever worker is alive. And the webhook dispatchers.
  const ownWorkflows = startOwnWorkflows(client, {
    taskQueue,
    watchedNetworks: options.watch ? networks.map((ctx) => ctx.network) : [],
    version: options.version,
    log: (line) => console.warn(line),
  });
  const heads = new Map(networks.map((ctx) => [ctx.network, ctx.heads] as const));
  const metrics = options.metricsPort !== undefined ? await startMetricsServer(options.metricsPort, '127.0.0.1', options.taskFailures, heads) : undefined;
  // Subscribed from the start, so /readyz tells a dead WebSocket before the first capture is slow.
  for (const ctx of networks) {
    ctx.heads.onStateChange = (status) => console.warn(`authcap worker: ${ctx.network} head feed ${status.state}: ${status.detail}`);
    ctx.heads.connect();
  }
  let running: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  return {
    worker,
    rpcMetrics: chain.rpcMetrics,
    rpcMetricsByNetwork: new Map(networks.map((ctx) => [ctx.network, ctx.rpcMetrics] as const)),
    connection,
    metricsUrl: metrics?.url,
    run() {
      // Either one ending (a fatal error, a shutdown) ends both.
      running ??= Promise.all([
        worker.run().finally(() => followWorker.getState() === 'RUNNING' && followWorker.shutdown()),
        followWorker.run().finally(() => worker.getState() === 'RUNNING' && worker.shutdown()),
      ]).then(() => undefined);
      return running;
    },
    // Both a shutdown signal and run() returning call this: the second call waits on the first
    // instead of closing the connection twice (an uncaught "Client already closed", exit code 1).
    shutdown() {
      stopping ??= (async () => {
        retrying?.stop();
        ownWorkflows.stop();
        for (const ctx of networks) ctx.heads.stop();
        metrics?.server.close();
        if (worker.getState() === 'RUNNING') worker.shutdown();
        if (followWorker.getState() === 'RUNNING') followWorker.shutdown();
        await running?.catch(() => undefined);
        await connection.close();
      })();
      return stopping;
    },
  };
}

/** The contexts of every configured network and token. */
async function chainContextsOf(options: AuthcapWorkerOptions): Promise<ChainContext[]> {
  const { networks, unavailable } = options.deployment;
  // In configured order (the first network's first token is the default), waiting ones included: their
  // chain id is the one their configured id names, checked against the node once it answers.
  const configured = [
    ...networks.map((network) => ({ network, chainId: undefined, tokens: network.tokens.map((t) => t.address), escrow: escrowOf(network.escrow) })),
    ...unavailable.map((waiting) => ({
      network: { ...waiting.loaded, network: waiting.network },
      chainId: waiting.chainId,
      tokens: waiting.tokens,
      escrow: escrowOf(waiting.loaded.escrow),
    })),
  ].sort((a, b) => options.deployment.catalog.order(a.network.network) - options.deployment.catalog.order(b.network.network));
  const perNetwork = await Promise.all(
    configured.map(({ network, chainId, tokens, escrow }) =>
      createNetworkContexts(
        {
          network: network.network,
          ...(chainId === undefined ? {} : { chainId }),
          rpcUrls: network.rpcUrls,
          wsUrl: network.wsUrl,
          confirmations: network.confirmations,
          logSpan: network.logSpan,
          merchantPrivateKeys: network.merchantPrivateKeys,
          tokens,
          ...(escrow ? { escrow } : {}),
        },
        options.policy,
      ),
    ),
  );
  return perNetwork.flat();
}

/** A network's escrow as the activities take it (a waiting network's as configured: checked once its node answers). */
function escrowOf(escrow: { address: string; paymentCollector: string; refundCollector: string } | undefined): EscrowAddresses | undefined {
  return (
    escrow && { escrow: getAddress(escrow.address), paymentCollector: getAddress(escrow.paymentCollector), refundCollector: getAddress(escrow.refundCollector) }
  );
}

/** A network's WebSocket, as its deployment file names it (its watcher subscribes over it). */
function networkWsUrl(deployment: ResolvedDeployment, network: string): string | undefined {
  const configured = deployment.networks.find((n) => n.network === network) ?? deployment.unavailable.find((n) => n.network === network)?.loaded;
  return configured?.wsUrl;
}

/**
 * Where the workflow code comes from: the caller's bundle (tests), the build's (dist/: no webpack in
 * the worker, so a faster start and a smaller process), or bundled here at start from source. Tracing
 * bundles its workflow interceptors with the code, so a worker with tracing on always bundles its own.
 */
function workflowCode(
  given: WorkflowBundleOption | undefined,
  settings: WorkerProcessSettings,
): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions' | 'plugins'> & {
  workflowModules?: string[];
} {
  if (given) return { workflowBundle: given };
  const tracing = tracingPluginOf('authcap-worker', settings);
  const bundlerOptions = { preloadModules: sharedWorkflowModules };
  if (tracing) return { workflowsPath, bundlerOptions, workflowModules: workflowInterceptorModules, plugins: [tracing] };
  if (existsSync(prebuiltBundlePath)) return { workflowBundle: { codePath: prebuiltBundlePath } };
  return { workflowsPath, bundlerOptions, workflowModules: workflowInterceptorModules };
}

/** The keys that tag drafted nonces: derived from the payload keys every worker holds (unkeyed only with the codec off, in tests). */
function draftNonceKeysOf(temporal: TemporalSettings): Buffer[] {
  const codec = temporal.dataConverter?.payloadCodecs?.find((c): c is EncryptionCodec => c instanceof EncryptionCodec);
  return codec ? codec.deriveKeys('draft-nonce-tag') : [createHash('sha256').update('authcap:unkeyed-draft-nonce-tag').digest()];
}

/** Every workflow auto-upgrade: an authorization lives for days, so it moves to the current version (runtime/workerDeployment.ts). */
function versioning(version: DeploymentVersion | undefined): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  return version ? { workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'AUTO_UPGRADE' } } : {};
}
