// Which Temporal the stack runs when no TEMPORAL_ADDRESS names one: the CLI's dev server (SQLite, Web
// UI; the default) or, with AUTHCAP_TEMPORAL=postgres, the production shape (the Temporal server on a
// PostgreSQL cluster of the stack's own). The product code is the same on both.
import { appendFileSync, chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ManagedProcess } from './process.js';
import { publicCodecEndpoint, startTemporalServer } from './temporalServer.js';
import { startTemporalUi } from './temporalUi.js';
import { startTemporalOnPostgres, type TemporalOnPostgres } from './temporalOnPostgres.js';

/** AUTHCAP_TEMPORAL (the dev stack's settings). */
export type TemporalTopology = 'dev' | 'postgres';

export interface EmbeddedTemporalOptions {
  topology: TemporalTopology;
  stateDir: string;
  port: number;
  uiPort: number;
  persistent: boolean;
  headless?: boolean;
  metricsPort?: number;
  /** The dev server's SQLite pragmas and dynamic config (AUTHCAP_SQLITE_PRAGMAS, AUTHCAP_TEMPORAL_DYNAMIC_CONFIG). */
  sqlitePragmas?: string[];
  dynamicConfig?: string[];
  uiCodecEndpoint?: string;
  log: (line: string) => void;
}

export interface EmbeddedTemporal {
  address: string;
  namespace: string;
  uiUrl: string | null;
  process: ManagedProcess;
  /** The production shape only: its database, and restarts for the fault cases. */
  postgres?: TemporalOnPostgres;
  /** The production shape's Web UI process (the dev server's is inside it). */
  ui?: ManagedProcess;
  /** The production shape's Web UI wants this operator token (kept in this file); the dev server's asks for none. */
  uiToken?: { token: string; file: string };
  stop(): Promise<void>;
}

export async function startEmbeddedTemporal(options: EmbeddedTemporalOptions): Promise<EmbeddedTemporal> {
  if (options.topology === 'postgres') {
    const cluster = await startTemporalOnPostgres({
      stateDir: options.stateDir,
      port: options.port,
      namespace: 'authcap',
      metricsPort: options.metricsPort,
      log: options.log,
      onOutput: logTo(options.stateDir),
    });
    const ui = options.headless
      ? undefined
      : await startTemporalUi({
          stateDir: options.stateDir,
          temporalAddress: cluster.address,
          port: options.uiPort,
          namespace: cluster.namespace,
          codecEndpoint: options.uiCodecEndpoint && publicCodecEndpoint(options.uiCodecEndpoint),
          log: options.log,
          onOutput: logTo(options.stateDir),
        }).catch(async (err) => {
          await cluster.stop();
          throw err;
        });
    return {
      address: cluster.address,
      namespace: cluster.namespace,
      uiUrl: ui?.url ?? null,
      postgres: cluster,
      ui: ui?.process,
      uiToken: ui ? { token: ui.token, file: ui.tokenFile } : undefined,
      get process() {
        return cluster.process;
      },
      stop: async () => {
        await ui?.stop();
        await cluster.stop();
      },
    };
  }
  const dbFile = options.persistent ? join(options.stateDir, 'temporal.db') : undefined;
  const server = await startTemporalServer({
    port: options.port,
    uiPort: options.uiPort,
    dbFile,
    headless: options.headless,
    metricsPort: options.metricsPort,
    sqlitePragmas: options.sqlitePragmas,
    dynamicConfig: options.dynamicConfig,
    uiCodecEndpoint: options.uiCodecEndpoint,
    log: options.log,
  });
  for (const file of dbFile ? [dbFile, `${dbFile}-wal`, `${dbFile}-shm`] : []) if (existsSync(file)) chmodSync(file, 0o600);
  return { address: server.address, namespace: server.namespace, uiUrl: server.uiUrl, process: server.process, stop: () => server.stop() };
}

/** The server's and PostgreSQL's own output: appended to a file in the state dir, not the terminal (a restart keeps earlier lines). */
function logTo(stateDir: string): (chunk: string) => void {
  return (chunk) => {
    try {
      appendFileSync(join(stateDir, 'temporal.log'), chunk, { mode: 0o600 });
    } catch {
      // a full disk must not stop the stack
    }
  };
}
