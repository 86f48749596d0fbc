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
  /** The codec server the Web UI decodes payloads through (with its capability token). */
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

export async function startTemporalServer(options: TemporalServerOptions): Promise<TemporalServer> {
  const cli = await resolveTemporalCli(options.log);
  const namespace = options.namespace ?? 'default';
  const address = `127.0.0.1:${options.port}`;
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--namespace', namespace,
    '--log-level', 'error', ...searchAttributeCliFlags()];
  if (options.dbFile) args.push('--db-filename', options.dbFile);
  if (options.headless) args.push('--headless');
  else args.push('--ui-ip', '127.0.0.1', '--ui-port', String(options.uiPort ?? options.port + 1000));
  if (options.uiCodecEndpoint && !options.headless) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
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
