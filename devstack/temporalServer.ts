// The Temporal CLI dev server: SQLite file, Web UI, and the project's search attributes registered.
import { Connection } from '@temporalio/client';
import { searchAttributeCliFlags } from '../domain/searchAttributes.js';
import { freePort, startProcess, waitFor, type ManagedProcess } from './process.js';
import { resolveTemporalCli } from './temporalCli.js';
import { defaultOf } from '../runtime/settings/read.js';

export interface TemporalServerOptions {
  port: number;
  uiPort?: number;
  /** Without it the server keeps its state in memory. */
  dbFile?: string;
  headless?: boolean;
  /**
   * The codec server the Web UI decodes payloads through: a bare origin, never a secret. Every local
   * user reads it, from this process's command line and from the UI's unauthenticated settings.
   */
  uiCodecEndpoint?: string;
  namespace?: string;
  /** Serve the server's Prometheus metrics here (the bench reads its calls by operation); else a random port. */
  metricsPort?: number;
  /**
   * The database file's settings (SQLite's defaults sync the journal to disk at every commit); default:
   * a write-ahead log, synced at checkpoints (AUTHCAP_SQLITE_PRAGMAS' default). A killed server or machine
   * process loses nothing committed (the fault suite kills the server mid-capture); only an operating-system
   * crash or power loss can drop the last transactions, which a production server on PostgreSQL does not risk.
   */
  sqlitePragmas?: string[];
  /**
   * The server's dynamic config, KEY=VALUE; default AUTHCAP_TEMPORAL_DYNAMIC_CONFIG's: one partition per task
   * queue (the server's default of 4 suits a cluster with many pollers; one process with one worker pays
   * for forwarding polls and tasks between partitions instead), and eager activities (an activity
   * scheduled on the worker's own task queue comes back in the workflow task's completion when the
   * worker has a slot, with no matching round trip).
   */
  dynamicConfig?: string[];
  log?: (line: string) => void;
  onOutput?: (chunk: string) => void;
}

export interface TemporalServer {
  address: string;
  namespace: string;
  uiUrl: string | null;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/** Refuses a UI codec endpoint with anything that might be a credential in it (a path, a query, a user). */
export function publicCodecEndpoint(endpoint: string): string {
  const url = new URL(endpoint);
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') {
    throw new Error("the Web UI's codec endpoint is public (process list, GET /api/v1/settings): give it the bare origin, no token");
  }
  return url.origin;
}

export async function startTemporalServer(options: TemporalServerOptions): Promise<TemporalServer> {
  const cli = await resolveTemporalCli(options.log);
  const namespace = options.namespace ?? 'default';
  const address = `127.0.0.1:${options.port}`;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--namespace',
    namespace,
    '--log-level',
    'error',
    // Named here: the CLI would pick its HTTP API port from the OS's ephemeral range, where an outgoing
    // connection can take it before the server binds it.
    '--http-port',
    String(await freePort()),
    ...searchAttributeCliFlags(),
  ];
  const pragmas = options.sqlitePragmas ?? defaultOf('AUTHCAP_SQLITE_PRAGMAS');
  if (options.dbFile) args.push('--db-filename', options.dbFile, ...pragmas.flatMap((p) => ['--sqlite-pragma', p]));
  if (options.metricsPort !== undefined) args.push('--metrics-port', String(options.metricsPort));
  for (const value of options.dynamicConfig ?? defaultOf('AUTHCAP_TEMPORAL_DYNAMIC_CONFIG')) args.push('--dynamic-config-value', value);
  if (options.headless) args.push('--headless');
  else args.push('--ui-ip', '127.0.0.1', '--ui-port', String(options.uiPort ?? options.port + 1000));
  if (options.uiCodecEndpoint && !options.headless) args.push('--ui-codec-endpoint', publicCodecEndpoint(options.uiCodecEndpoint));
  const proc = await startProcess({
    name: 'temporal',
    command: cli,
    args,
    onOutput: options.onOutput,
    readyTimeoutMs: 60_000,
    ready: () =>
      waitFor(async () => {
        const connection = await Connection.connect({ address, connectTimeout: 1_000 });
        try {
          await connection.workflowService.describeNamespace({ namespace });
          return true;
        } finally {
          await connection.close();
        }
      }, 250),
  });
  const uiUrl = options.headless ? null : `http://127.0.0.1:${options.uiPort ?? options.port + 1000}`;
  return { address, namespace, uiUrl, process: proc, stop: () => proc.stop() };
}
