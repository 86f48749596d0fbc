// The Temporal CLI dev server: SQLite file, Web UI, and the project's search attributes registered.
import { Connection } from '@temporalio/client';
import { searchAttributeCliFlags } from '../domain/searchAttributes.js';
import { startProcess, waitFor, type ManagedProcess } from './process.js';
import { resolveTemporalCli } from './temporalCli.js';

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
    throw new Error('the Web UI\'s codec endpoint is public (process list, GET /api/v1/settings): give it the bare origin, no token');
  }
  return url.origin;
}

export async function startTemporalServer(options: TemporalServerOptions): Promise<TemporalServer> {
  const cli = await resolveTemporalCli(options.log);
  const namespace = options.namespace ?? 'default';
  const address = `127.0.0.1:${options.port}`;
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--namespace', namespace,
    '--log-level', 'error', ...searchAttributeCliFlags()];
  if (options.dbFile) args.push('--db-filename', options.dbFile);
  if (options.headless) args.push('--headless');
  else args.push('--ui-ip', '127.0.0.1', '--ui-port', String(options.uiPort ?? options.port + 1000));
  if (options.uiCodecEndpoint && !options.headless) args.push('--ui-codec-endpoint', publicCodecEndpoint(options.uiCodecEndpoint));
  const proc = await startProcess({
    name: 'temporal',
    command: cli,
    args,
    onOutput: options.onOutput,
    readyTimeoutMs: 60_000,
    ready: () => waitFor(async () => {
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
