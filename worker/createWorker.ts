// Builds the authcap worker: workflows bundled from workflows/, activities bound to the chain.
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { existsSync } from 'node:fs';
import { NativeConnection, Worker, type WorkerOptions, type WorkflowBundleOption } from '@temporalio/worker';
import { relayerWorkflowId, type LegacyRelayRequest, type RelayRequest } from '../domain/relay.js';
import { relayRequestSignal } from '../workflows/messages.js';
import type { merchantRelayerWorkflow as RelayerWorkflow } from '../workflows/relayer.js';
import { startWatcher, type Watcher } from './watcher.js';
import { eventBridges } from './eventBridges.js';
import type { RpcMetrics } from '../activities/rpc/rpcMetrics.js';
import { createActivities, createChainContext, type ChainConfig } from '../activities/index.js';
import { rpcCalls, rpcErrors, startMetricsServer, telemetrySinks } from './telemetry.js';
import { tracingPluginFromEnv } from '../runtime/tracing.js';
import { sealedActivityInputs } from './sealedActivityInputs.js';
import type { TaskFailureTracker } from './taskFailures.js';
import type { TemporalSettings } from '../runtime/temporal.js';

// Run from the build (dist/), this file is JavaScript and the workflows beside it too.
const compiled = import.meta.url.endsWith('.js');
export const workflowsPath = fileURLToPath(new URL(`../workflows/index.${compiled ? 'js' : 'ts'}`, import.meta.url));
/** Bundled with the workflows (scripts/build.ts does the same for dist/): every input must be sealed. */
export const workflowInterceptorModules = [fileURLToPath(new URL(`../workflows/sealedInputs.${compiled ? 'js' : 'ts'}`, import.meta.url))];
/** The bundle `npm run build` made (dist/workflow-bundle.js): absent when running from source. */
const prebuiltBundlePath = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

export interface AuthcapWorkerOptions {
  temporal: TemporalSettings;
  chain: ChainConfig;
  /** A prebuilt bundle (tests build one per run); by default the worker bundles workflows/ itself. */
  workflowBundle?: WorkflowBundleOption;
  /** Run the log watcher beside the worker (several workers may each run one: deliveries are idempotent). */
  watcher?: { cursorFile: string; wsUrl?: string };
  /** Serve Prometheus metrics at http://127.0.0.1:<port>/metrics (0: a free port). */
  metricsPort?: number;
  /** Failed workflow tasks seen by the runtime logger (worker/main.ts installs it): listed at /readyz. */
  taskFailures?: TaskFailureTracker;
}

export interface AuthcapWorker {
  worker: Worker;
  /** What this worker has asked of the node so far. */
  rpcMetrics: RpcMetrics;
  watcher?: Watcher;
  connection: NativeConnection;
  /** Where this worker's Prometheus metrics answer, when metricsPort was given. */
  metricsUrl?: string;
  /** Runs until shutdown() is called. */
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

export async function createAuthcapWorker(options: AuthcapWorkerOptions): Promise<AuthcapWorker> {
  const chain = await createChainContext(options.chain);
  chain.rpcMetrics.listeners.call = (method) => rpcCalls.inc({ method });
  chain.rpcMetrics.listeners.error = (method) => rpcErrors.inc({ method });
  const connection = await NativeConnection.connect(options.temporal.connectionOptions);
  const { namespace, taskQueue } = options.temporal;
  const client = new Client({ connection, namespace, dataConverter: options.temporal.dataConverter });
  // Signal-with-start: the merchant's relayer exists from the first transaction on, whichever worker
  // process asks first, and Temporal guarantees there is only ever one per merchant key.
  const requestRelay = async (request: RelayRequest) => {
    await client.workflow.signalWithStart<typeof RelayerWorkflow, [RelayRequest | LegacyRelayRequest]>('merchantRelayerWorkflow', {
      // Each merchant key has its own relayer: the one the transaction must be sent by.
      workflowId: relayerWorkflowId(chain.senderFor(request.sender)),
      taskQueue,
      args: [{ accountNonce: null, inflight: [], answered: [] }],
      signal: relayRequestSignal,
      signalArgs: [request],
    });
  };
  // A bundle carries its workflow interceptors (built with them); bundling here adds them.
  const { workflowModules, ...code } = workflowCode(options.workflowBundle);
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    activities: createActivities(chain, { requestRelay, events: eventBridges(client) }),
    dataConverter: options.temporal.dataConverter,
    interceptors: { activity: [sealedActivityInputs], ...(workflowModules ? { workflowModules } : {}) },
    sinks: telemetrySinks(),
    // Open authorizations mostly wait on a timer: bound the cache so memory does not grow with them
    // (an evicted one is replayed from its short history when a message or its deadline arrives).
    maxCachedWorkflows: workflowCacheSize(),
    // Workflows in the main thread, so a CPU profile sees them (slower: for profiling only).
    debugMode: process.env.AUTHCAP_PROFILE_WORKFLOWS === '1',
    ...code,
  });
  const watcher = options.watcher
    ? startWatcher({
        client,
        publicClient: chain.publicClient,
        tokenAddress: chain.tokenAddress,
        ignoreAuthorizers: chain.merchants,
        ...options.watcher,
        log: (line) => console.warn(line),
      })
    : undefined;
  const metrics = options.metricsPort !== undefined ? await startMetricsServer(options.metricsPort, '127.0.0.1', options.taskFailures, chain.heads) : undefined;
  // Subscribed from the start, so /readyz tells a dead WebSocket before the first capture is slow.
  chain.heads.onStateChange = (status) => console.warn(`authcap worker: head feed ${status.state}: ${status.detail}`);
  chain.heads.connect();
  let running: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  return {
    worker,
    rpcMetrics: chain.rpcMetrics,
    watcher,
    connection,
    metricsUrl: metrics?.url,
    run() {
      running ??= worker.run();
      return running;
    },
    // Both a shutdown signal and run() returning call this: the second call waits on the first
    // instead of closing the connection twice (an uncaught "Client already closed", exit code 1).
    shutdown() {
      stopping ??= (async () => {
        await watcher?.stop();
        chain.heads.stop();
        metrics?.server.close();
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running?.catch(() => undefined);
        await connection.close();
      })();
      return stopping;
    },
  };
}

/**
 * Where the workflow code comes from: the caller's bundle (tests), the build's (dist/: no webpack in
 * the worker, so a faster start and a smaller process), or bundled here at start from source. Tracing
 * bundles its workflow interceptors with the code, so a worker with tracing on always bundles its own.
 */
function workflowCode(given?: WorkflowBundleOption): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'plugins'> & {
  workflowModules?: string[];
} {
  if (given) return { workflowBundle: given };
  const tracing = tracingPluginFromEnv('authcap-worker');
  if (tracing) return { workflowsPath, workflowModules: workflowInterceptorModules, plugins: [tracing] };
  if (existsSync(prebuiltBundlePath)) return { workflowBundle: { codePath: prebuiltBundlePath } };
  return { workflowsPath, workflowModules: workflowInterceptorModules };
}

export function workflowCacheSize(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.AUTHCAP_WORKFLOW_CACHE_SIZE;
  const value = raw === undefined || raw === '' ? 250 : Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`AUTHCAP_WORKFLOW_CACHE_SIZE must be a positive whole number, got "${raw}"`);
  return value;
}
