// The production shape of Temporal on one machine: the Temporal server itself (go.temporal.io/server,
// the version the CLI v1.5.1 embeds, with the mTLS claim mapper of devstack/temporal-server, built
// once and cached) on a PostgreSQL cluster of the stack's own, SQL (advanced) visibility, 4 history
// shards, the namespace and search attributes registered through the operator service. Every
// connection to it is mutual TLS (devstack/temporalTls.ts): callers by their client certificates,
// the server's own services among themselves by the internode one. `AUTHCAP_TEMPORAL=postgres npm
// start` runs it instead of the dev server. The same cluster keeps the API's Idempotency-Key answers
// in a database of their own (`authcap`, its own role): the API processes share nothing else.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { ensureNamespaceReady } from '../runtime/temporalSetup.js';
import { childEnv } from './childEnv.js';
import { ensureAppDatabase, startPostgres, type Postgres } from './postgres.js';
import { freeLowPort, freePort, startProcess, waitFor, type ManagedProcess } from './process.js';
import { TEMPORAL_SERVER_VERSION, temporalServerBinaries } from './temporalServerBuild.js';
import { DYNAMIC_CONFIG, serverConfig } from './temporalServerConfig.js';
import { clientTlsEnv, connectionTls, ensureTemporalTls, type TemporalTls } from './temporalTls.js';

const run = promisify(execFile);

/** The server release the Temporal CLI v1.5.1 is built on: one Temporal for both topologies. */
export { TEMPORAL_SERVER_VERSION };
/** Fixed when the cluster is created (they cannot change afterwards): enough to spread a small load. */
export const HISTORY_SHARDS = 4;
const SCHEMA = { temporal: { name: 'postgresql/v12/temporal', version: '1.18' }, visibility: { name: 'postgresql/v12/visibility', version: '1.9' } } as const;

export interface TemporalOnPostgresOptions {
  stateDir: string;
  port: number;
  namespace: string;
  metricsPort?: number;
  postgresPort?: number;
  log: (line: string) => void;
  onOutput?: (chunk: string) => void;
}

export interface TemporalOnPostgres {
  address: string;
  namespace: string;
  /** The certificates every caller presents, and what they trust. */
  tls: TemporalTls;
  process: ManagedProcess;
  postgres: Postgres;
  /** The `authcap` database for the API processes' Idempotency-Key answers (AUTHCAP_IDEMPOTENCY_DATABASE_URL). */
  idempotencyDatabaseUrl: string;
  /** Stops the server, then PostgreSQL. */
  stop(): Promise<void>;
  /** Starts the server again on the same ports and database; `kill`: SIGKILL it first, as a crash would. */
  restartServer(options?: { kill?: boolean }): Promise<void>;
  restartPostgres(): Promise<void>;
}

/**
 * Starts the cluster and makes this process a client of it: TEMPORAL_TLS_* in process.env name the
 * operator CLI's certificate (as the stack puts AUTHCAP_CODEC_KEYS there), so its own clients and
 * every child it starts reach the server; the stack gives its worker and API processes certificates
 * of their own. AUTHCAP_IDEMPOTENCY_DATABASE_URL there names the `authcap` database, which the stack
 * gives its API processes.
 */
export async function startTemporalOnPostgres(options: TemporalOnPostgresOptions): Promise<TemporalOnPostgres> {
  const { server, sqlTool } = await temporalServerBinaries(options.log);
  const home = join(options.stateDir, 'temporal-server');
  mkdirSync(join(home, 'config'), { recursive: true, mode: 0o700 });
  const tls = await ensureTemporalTls(options.stateDir, options.namespace);
  const setupTls = connectionTls(tls, tls.clients.setup);
  const postgresPort = options.postgresPort ?? (await freePort());
  const startDb = () =>
    startPostgres({
      dataDir: join(options.stateDir, 'postgres'),
      passwordFile: join(options.stateDir, 'postgres-password'),
      port: postgresPort,
      log: options.log,
      onOutput: options.onOutput,
    });
  let postgres = await startDb();
  try {
    await ensureSchemas(sqlTool, postgres, home, options.log);
    const idempotencyDatabaseUrl = await ensureAppDatabase(postgres, {
      database: 'authcap',
      role: 'authcap',
      passwordFile: join(options.stateDir, 'postgres-authcap-password'),
      closedTo: ['temporal', 'temporal_visibility'],
    });
    const ports = {
      grpc: options.port,
      http: await freePort(),
      metrics: options.metricsPort ?? (await freePort()),
      internal: await Promise.all(Array.from({ length: 9 }, () => freeLowPort())),
    };
    const dynamicConfigFile = join(home, 'dynamicconfig.yaml');
    writeFileSync(join(home, 'config', 'development.yaml'), serverConfig({ db: postgres, shards: HISTORY_SHARDS, ports, dynamicConfigFile, tls }), {
      mode: 0o600,
    });
    writeFileSync(dynamicConfigFile, DYNAMIC_CONFIG, { mode: 0o600 });
    const address = `127.0.0.1:${options.port}`;
    const startServer = () =>
      startProcess({
        name: 'temporal',
        command: server,
        args: ['--root', home, '--config', 'config', '--env', 'development'],
        onOutput: options.onOutput,
        readyTimeoutMs: 120_000,
        ready: () =>
          waitFor(async () => {
            const connection = await Connection.connect({ address, tls: setupTls, connectTimeout: 1_000 });
            try {
              await connection.workflowService.getSystemInfo({});
              return true;
            } finally {
              await connection.close();
            }
          }, 250),
      });
    let serverProcess = await startServer();
    const connection = await Connection.connect({ address, tls: setupTls });
    try {
      const report = await ensureNamespaceReady(connection, options.namespace);
      if (report.namespaceCreated) options.log(`authcap: namespace ${options.namespace} registered`);
      if (report.searchAttributesAdded.length > 0) options.log(`authcap: search attributes registered: ${report.searchAttributesAdded.join(', ')}`);
    } finally {
      await connection.close();
    }
    Object.assign(process.env, clientTlsEnv(tls, 'cli'), { AUTHCAP_IDEMPOTENCY_DATABASE_URL: idempotencyDatabaseUrl });
    const result: TemporalOnPostgres = {
      address,
      namespace: options.namespace,
      tls,
      process: serverProcess,
      postgres,
      idempotencyDatabaseUrl,
      stop: async () => {
        await result.process.stop();
        await result.postgres.stop();
      },
      restartServer: async ({ kill = false } = {}) => {
        if (kill) result.process.child.kill('SIGKILL');
        await result.process.stop();
        serverProcess = await startServer();
        result.process = serverProcess;
      },
      restartPostgres: async () => {
        await result.postgres.stop();
        postgres = await startDb();
        result.postgres = postgres;
      },
    };
    return result;
  } catch (err) {
    await postgres.stop();
    throw err;
  }
}

/** Databases and schemas once (a marker file records it); a second start reuses them. */
async function ensureSchemas(sqlTool: string, postgres: Postgres, home: string, log: (line: string) => void): Promise<void> {
  const marker = join(home, 'schema-ready');
  if (existsSync(marker)) return;
  log("authcap: setting up Temporal's schemas in PostgreSQL (temporal-sql-tool)…");
  const env = childEnv({
    SQL_PLUGIN: 'postgres12',
    SQL_HOST: postgres.host,
    SQL_PORT: String(postgres.port),
    SQL_USER: postgres.user,
    SQL_PASSWORD: postgres.password,
  });
  for (const [database, schema] of [
    ['temporal', SCHEMA.temporal],
    ['temporal_visibility', SCHEMA.visibility],
  ] as const) {
    await run(sqlTool, ['--db', database, 'create-database'], { env }).catch((err) => {
      if (!/already exists/.test(String(err.stderr ?? err.message))) throw err;
    });
    await run(sqlTool, ['--db', database, 'setup-schema', '-s', schema.name, '-v', schema.version, '--overwrite'], { env });
  }
  writeFileSync(marker, `${JSON.stringify({ server: TEMPORAL_SERVER_VERSION, shards: HISTORY_SHARDS })}\n`);
}
