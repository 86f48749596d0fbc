// The workers and the HTTP APIs as their own OS processes, so each can
// fail, be killed or be restarted alone (npm start, the fault suites), with their logs in the state dir.
// On the production shape each process is a host of its own (prepareHost): a state dir and HOME
// that no other process shares, so they meet only in Temporal and PostgreSQL, as on separate machines.
import { chmodSync, copyFileSync, createWriteStream, mkdirSync, renameSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkoutSecret } from '../runtime/checkoutLinks.js';
import type { TemporalSettings } from '../runtime/temporal.js';
import { processCommand } from './build.js';
import { variablesReadBy } from './childEnv.js';
import { freePort, startProcess, type ManagedProcess } from './process.js';
import { clientTlsEnv, tlsEnvFor, type TemporalTls } from './temporalTls.js';
import type { Settings } from '../runtime/settings/catalog.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Runs from the build (dist/) when it is fresh, else from source through tsx. */
function spawnEntry(
  name: 'worker' | 'api',
  entry: string,
  readyLine: string,
  env: Record<string, string>,
  onOutput?: (chunk: string) => void,
): Promise<ManagedProcess> {
  let output = '';
  return startProcess({
    name,
    command: process.execPath,
    cwd: root,
    args: processCommand(entry).args,
    // What it is given, and of the operator's settings only those it reads (the API never sees a merchant key).
    env,
    inherit: variablesReadBy(name),
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

/** A file a host gets from the stack's state dir, under `as` in its own. */
export interface HostFile {
  from: string;
  as: string;
  /** Copied again whenever it changes (the API key file: `authcap keys create` reaches every host, as a deploy would). */
  keepInSync?: boolean;
}

export interface HostOptions {
  stateDir: string;
  /** `worker-1`, `api-2`: its folder is `<stateDir>/hosts/<name>`. */
  name: string;
  /** The deployment file, copied in. */
  configFile?: string;
  /** The Temporal certificate this kind of process presents, copied in with the CA it trusts. */
  tls?: { tls: TemporalTls; identity: 'worker' | 'api' };
  files?: HostFile[];
}

export interface Host {
  dir: string;
  /** AUTHCAP_STATE_DIR, HOME, and every path the process reads, all inside dir. */
  env: Record<string, string>;
  /** Stops keeping files in sync. */
  stop(): void;
}

/** A simulated host: its own state dir and HOME, with what its process needs copied in (0600). */
export function prepareHost(options: HostOptions): Host {
  const dir = resolve(options.stateDir, 'hosts', options.name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const place = (from: string, as: string) => {
    const target = join(dir, as);
    // Aside, then renamed: a process reading the file never sees half of it.
    const staging = `${target}.tmp`;
    copyFileSync(from, staging);
    chmodSync(staging, 0o600);
    renameSync(staging, target);
    return target;
  };
  const env: Record<string, string> = { AUTHCAP_STATE_DIR: dir, HOME: dir };
  if (options.configFile) env.AUTHCAP_CONFIG = place(options.configFile, 'deployment.json');
  if (options.tls) {
    const { tls, identity } = options.tls;
    const files = tls.clients[identity];
    mkdirSync(join(dir, 'temporal-tls'), { recursive: true, mode: 0o700 });
    Object.assign(
      env,
      tlsEnvFor(
        { ...tls, serverCaPath: place(tls.serverCaPath, 'temporal-tls/server-ca.pem') },
        { certPath: place(files.certPath, `temporal-tls/client-${identity}.pem`), keyPath: place(files.keyPath, `temporal-tls/client-${identity}-key.pem`) },
      ),
    );
  }
  const watched: (() => void)[] = [];
  for (const file of options.files ?? []) {
    // The version is read before the copy: a change made during it is seen (and copied) next tick.
    let copied = version(file.from);
    if (copied !== undefined) place(file.from, file.as);
    if (!file.keepInSync) continue;
    // Compared with what was copied, not with a watcher's own first look: fs.watchFile takes its
    // baseline a moment after it starts, so a change made in that moment would never be copied.
    const timer = setInterval(() => {
      try {
        const now = version(file.from);
        if (now === copied) return;
        if (now !== undefined) place(file.from, file.as);
        copied = now;
      } catch {
        // changed again while copying: the next tick copies it
      }
    }, 500);
    timer.unref();
    watched.push(() => clearInterval(timer));
  }
  return {
    dir,
    env,
    stop: () => {
      for (const unwatch of watched) unwatch();
    },
  };
}

/**
 * What every API host needs from the stack's state dir: the API key file, and one checkout link
 * secret (made here if missing), so a link one API hands out is good on every other. (An
 * AUTHCAP_CHECKOUT_SECRET the APIs are given wins over the file.)
 */
export function apiHostFiles(stateDir: string): HostFile[] {
  checkoutSecret({ stateDir });
  return [
    { from: join(stateDir, 'api-keys.json'), as: 'api-keys.json', keepInSync: true },
    { from: join(stateDir, 'checkout-secret'), as: 'checkout-secret' },
  ];
}

/**
 * How many worker and API processes: the options, else the dev stack's settings (AUTHCAP_WORKERS,
 * AUTHCAP_APIS), else two of each on the production shape, so it is tried as it is run.
 */
export function processCounts(
  given: { workers?: number; apis?: number },
  topology: string,
  settings: Pick<Settings<'dev-stack'>, 'AUTHCAP_WORKERS' | 'AUTHCAP_APIS'>,
): { workers: number; apis: number } {
  const count = (value: number | undefined, variable: 'AUTHCAP_WORKERS' | 'AUTHCAP_APIS') => {
    if (value === undefined) return settings[variable] ?? (topology === 'postgres' ? 2 : 1);
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
  /** The deployment configuration (AUTHCAP_CONFIG): every network and token the processes serve. */
  configFile: string;
  /**
   * The variables the file names, as each kind of process reads them: the worker its merchant keys
   * and URLs, the API the URLs alone (it never holds a merchant key).
   */
  fileEnv: { worker: Record<string, string>; api: Record<string, string> };
  merchantAddresses: string[];
  counts: { workers: number; apis: number };
  /** The port of the i-th API process. */
  apiPorts: (i: number) => number;
  /** AUTHCAP_VALIDITY_SECONDS of every worker (default: the operator's, as the worker reads it). */
  validitySeconds?: number;
  captureWaitMs?: number;
  /**
   * Each process a host of its own (prepareHost); default: on the production shape (temporalTls
   * given). Otherwise they share the state dir, as processes of one host.
   */
  separateHosts?: boolean;
  /** Idempotency-Key answers for every API (the production shape's database, or the operator's AUTHCAP_IDEMPOTENCY_DATABASE_URL). */
  idempotencyDatabaseUrl?: string;
  /** The first worker's /metrics port (AUTHCAP_WORKER_METRICS_PORT); else a free one, as for every other. */
  workerMetricsPort?: number;
  /** Where the APIs listen (AUTHCAP_API_HOST, default 127.0.0.1), for their URLs. */
  apiHost?: string;
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

/** What changes when a file is rewritten: its modification time and size (undefined: no file). */
function version(file: string): string | undefined {
  const stat = statSync(file, { throwIfNoEntry: false });
  return stat ? `${stat.mtimeMs}:${stat.size}:${stat.ino}` : undefined;
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
  const hosts: Host[] = [];
  const separateHosts = options.separateHosts ?? options.temporalTls !== undefined;
  const { idempotencyDatabaseUrl } = options;
  const started: AppProcesses = {
    workers: [],
    apis: [],
    apiUrls: [],
    workerMetricsUrl: '',
    workerMetricsUrls: [],
    async stop() {
      for (const proc of [...started.apis].reverse()) await proc.stop();
      for (const proc of [...started.workers].reverse()) await proc.stop();
      for (const host of hosts) host.stop();
      await Promise.all(streams.map((stream) => new Promise<void>((resolve) => stream.end(() => resolve()))));
    },
  };
  try {
    const env: Record<string, string> = {
      TEMPORAL_ADDRESS: options.temporal.connectionOptions.address!,
      TEMPORAL_NAMESPACE: options.temporal.namespace,
      AUTHCAP_CONFIG: options.configFile,
      AUTHCAP_STATE_DIR: options.stateDir,
      AUTHCAP_CODEC_KEYS: process.env.AUTHCAP_CODEC_KEYS ?? '',
    };
    const host = (name: string, identity: 'worker' | 'api', files: HostFile[]): Record<string, string> => {
      if (!separateHosts) return options.temporalTls ? clientTlsEnv(options.temporalTls, identity) : {};
      const made = prepareHost({
        stateDir: options.stateDir,
        name,
        configFile: options.configFile,
        tls: options.temporalTls ? { tls: options.temporalTls, identity } : undefined,
        files,
      });
      hosts.push(made);
      return made.env;
    };
    const workerMetricsPorts: string[] = [];
    for (let i = 0; i < options.counts.workers; i++) {
      const suffix = i === 0 ? '' : `-${i + 1}`;
      const hostEnv = host(`worker-${i + 1}`, 'worker', []);
      // Each worker's /metrics and /readyz (failing workflow tasks, head feed): an API's /readyz reports them.
      const metricsPort = String(i === 0 && options.workerMetricsPort ? options.workerMetricsPort : await freePort());
      workerMetricsPorts.push(metricsPort);
      started.workers.push(
        await startWorkerProcess(
          {
            ...env,
            ...options.fileEnv.worker,
            ...hostEnv,
            // Workers never touch Idempotency-Key answers: no credential of that database in their environment.
            AUTHCAP_IDEMPOTENCY_DATABASE_URL: '',
            AUTHCAP_WORKER_METRICS_PORT: metricsPort,
            ...(options.validitySeconds ? { AUTHCAP_VALIDITY_SECONDS: String(options.validitySeconds) } : {}),
          },
          logFile(`worker${suffix}`),
        ),
      );
    }
    started.workerMetricsUrls = workerMetricsPorts.map((port) => `http://127.0.0.1:${port}/metrics`);
    started.workerMetricsUrl = started.workerMetricsUrls[0]!;
    const apiFiles = separateHosts ? apiHostFiles(options.stateDir) : [];
    for (let i = 0; i < options.counts.apis; i++) {
      const suffix = i === 0 ? '' : `-${i + 1}`;
      const port = options.apiPorts(i);
      const hostEnv = host(`api-${i + 1}`, 'api', apiFiles);
      // The API never holds the merchant key: it only needs to know the address (never a payer).
      started.apis.push(
        await startApiProcess(
          {
            ...env,
            ...options.fileEnv.api,
            ...hostEnv,
            ...(idempotencyDatabaseUrl ? { AUTHCAP_IDEMPOTENCY_DATABASE_URL: idempotencyDatabaseUrl } : {}),
            AUTHCAP_API_PORT: String(port),
            AUTHCAP_MERCHANT_ADDRESS: options.merchantAddresses.join(','),
            AUTHCAP_WORKER_READYZ_URL: `http://127.0.0.1:${workerMetricsPorts[i % workerMetricsPorts.length]}/readyz`,
            ...(options.captureWaitMs ? { AUTHCAP_CAPTURE_WAIT_MS: String(options.captureWaitMs) } : {}),
          },
          logFile(`api${suffix}`),
        ),
      );
      started.apiUrls.push(`http://${options.apiHost ?? '127.0.0.1'}:${port}`);
    }
    return started;
  } catch (err) {
    await started.stop();
    throw err;
  }
}
