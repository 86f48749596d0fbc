// The workers and the HTTP APIs as their own OS processes, so each can
// fail, be killed or be restarted alone (npm start, the fault suites), with their logs in the state dir.
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChainConfig } from '../activities/index.js';
import type { TemporalSettings } from '../runtime/temporal.js';
import { processCommand } from './build.js';
import { freePort, startProcess, type ManagedProcess } from './process.js';
import { clientTlsEnv, type TemporalTls } from './temporalTls.js';
import { readVariable } from '../runtime/settings/read.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Runs from the build (dist/) when it is fresh, else from source through tsx. */
function spawnEntry(name: string, entry: string, readyLine: string, env: Record<string, string>, onOutput?: (chunk: string) => void): Promise<ManagedProcess> {
  let output = '';
  return startProcess({
    name,
    command: process.execPath,
    cwd: root,
    args: processCommand(entry).args,
    env,
    readyTimeoutMs: 120_000,
    onOutput: (chunk) => {
      output = (output + chunk).slice(-4096);
      onOutput?.(chunk);
    },
    ready: async (proc) => {
      while (!output.includes(readyLine)) {
        if (proc.child.exitCode !== null) throw new Error(`${name} exited: ${proc.tail()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  });
}

export function startWorkerProcess(env: Record<string, string>, onOutput?: (chunk: string) => void): Promise<ManagedProcess> {
  return spawnEntry('worker', 'worker/main.ts', 'authcap worker:', env, onOutput);
}

export function startApiProcess(env: Record<string, string>, onOutput?: (chunk: string) => void): Promise<ManagedProcess> {
  return spawnEntry('api', 'api/main.ts', 'authcap API listening on', env, onOutput);
}

/** How many worker and API processes: two of each on the production shape, so it is tried as it is run. */
export function processCounts(
  given: { workers?: number; apis?: number },
  topology: string,
  env: NodeJS.ProcessEnv = process.env,
): { workers: number; apis: number } {
  const count = (value: number | undefined, variable: 'AUTHCAP_WORKERS' | 'AUTHCAP_APIS') => {
    if (value === undefined) return readVariable(variable, env) ?? (topology === 'postgres' ? 2 : 1);
    if (!Number.isInteger(value) || value < 1 || value > 16) throw new Error(`${variable} must be a whole number from 1 to 16, got "${value}"`);
    return value;
  };
  return { workers: count(given.workers, 'AUTHCAP_WORKERS'), apis: count(given.apis, 'AUTHCAP_APIS') };
}

export interface AppProcessesOptions {
  stateDir: string;
  temporal: TemporalSettings;
  /** The embedded server's certificates (the production shape): each process presents its own. */
  temporalTls?: TemporalTls;
  chain: ChainConfig;
  /** The deployment configuration (AUTHCAP_CONFIG): every network and token the processes serve. */
  configFile: string;
  merchantAddresses: string[];
  counts: { workers: number; apis: number };
  /** The port of the i-th API process. */
  apiPorts: (i: number) => number;
  validitySeconds?: number;
  confirmations?: number;
  captureWaitMs?: number;
  log: (line: string) => void;
}

export interface AppProcesses {
  workers: ManagedProcess[];
  apis: ManagedProcess[];
  apiUrls: string[];
  /** The first worker's metrics (its /readyz beside them). */
  workerMetricsUrl: string;
  /** Every worker's metrics, in the order of `workers`. */
  workerMetricsUrls: string[];
  /** APIs first, then workers, then the log files. */
  stop(): Promise<void>;
}

export async function startAppProcesses(options: AppProcessesOptions): Promise<AppProcesses> {
  const streams: ReturnType<typeof createWriteStream>[] = [];
  const logFile = (name: string) => {
    const stream = createWriteStream(join(options.stateDir, `${name}.log`), { flags: 'a', mode: 0o600 });
    // A full disk or output after the stream closed must not bring the supervisor down.
    stream.on('error', (err) => options.log(`authcap: ${name}.log: ${err.message}`));
    streams.push(stream);
    return (chunk: string) => void (stream.writable && stream.write(chunk));
  };
  const started: AppProcesses = {
    workers: [],
    apis: [],
    apiUrls: [],
    workerMetricsUrl: '',
    workerMetricsUrls: [],
    async stop() {
      for (const proc of [...started.apis].reverse()) await proc.stop();
      for (const proc of [...started.workers].reverse()) await proc.stop();
      await Promise.all(streams.map((stream) => new Promise<void>((resolve) => stream.end(() => resolve()))));
    },
  };
  try {
    const env: Record<string, string> = {
      TEMPORAL_ADDRESS: options.temporal.connectionOptions.address!,
      TEMPORAL_NAMESPACE: options.temporal.namespace,
      AUTHCAP_CONFIG: options.configFile,
      // The one-network variables too, for what still reads them (and a build from before the file).
      RPC_URL: options.chain.rpcUrl,
      TOKEN_ADDRESS: options.chain.tokenAddress,
      AUTHCAP_STATE_DIR: options.stateDir,
      AUTHCAP_CODEC_KEYS: process.env.AUTHCAP_CODEC_KEYS ?? '',
    };
    const workerMetricsPorts: string[] = [];
    for (let i = 0; i < options.counts.workers; i++) {
      const suffix = i === 0 ? '' : `-${i + 1}`;
      // Each worker's /metrics and /readyz (failing workflow tasks, head feed): an API's /readyz reports them.
      const metricsPort = i === 0 && process.env.AUTHCAP_WORKER_METRICS_PORT ? process.env.AUTHCAP_WORKER_METRICS_PORT : String(await freePort());
      workerMetricsPorts.push(metricsPort);
      started.workers.push(
        await startWorkerProcess(
          {
            ...env,
            ...(options.temporalTls ? clientTlsEnv(options.temporalTls, 'worker') : {}),
            AUTHCAP_WORKER_METRICS_PORT: metricsPort,
            MERCHANT_PRIVATE_KEY: options.chain.merchantPrivateKey,
            MERCHANT_PRIVATE_KEYS: (options.chain.merchantPrivateKeys ?? []).join(','),
            AUTHCAP_VALIDITY_SECONDS: String(options.validitySeconds ?? options.chain.validitySeconds),
            AUTHCAP_CONFIRMATIONS: String(options.confirmations ?? options.chain.confirmations),
            // Where a worker from before the watcher moved into Temporal kept its place: read once on upgrade.
            AUTHCAP_WATCHER_CURSOR: join(options.stateDir, `watcher-cursor${suffix}.json`),
          },
          logFile(`worker${suffix}`),
        ),
      );
    }
    started.workerMetricsUrls = workerMetricsPorts.map((port) => `http://127.0.0.1:${port}/metrics`);
    started.workerMetricsUrl = started.workerMetricsUrls[0]!;
    for (let i = 0; i < options.counts.apis; i++) {
      const suffix = i === 0 ? '' : `-${i + 1}`;
      const port = options.apiPorts(i);
      // The API never holds the merchant key: it only needs to know the address (never a payer).
      started.apis.push(
        await startApiProcess(
          {
            ...env,
            ...(options.temporalTls ? clientTlsEnv(options.temporalTls, 'api') : {}),
            AUTHCAP_API_PORT: String(port),
            AUTHCAP_MERCHANT_ADDRESS: options.merchantAddresses.join(','),
            AUTHCAP_WORKER_READYZ_URL: `http://127.0.0.1:${workerMetricsPorts[i % workerMetricsPorts.length]}/readyz`,
            ...(options.captureWaitMs ? { AUTHCAP_CAPTURE_WAIT_MS: String(options.captureWaitMs) } : {}),
          },
          logFile(`api${suffix}`),
        ),
      );
      started.apiUrls.push(`http://${process.env.AUTHCAP_API_HOST ?? '127.0.0.1'}:${port}`);
    }
    return started;
  } catch (err) {
    await started.stop();
    throw err;
  }
}
