// The production shape of Temporal on one machine: the Temporal server itself (go.temporal.io/server,
// the version the CLI v1.5.1 embeds, built once like the CLI) on a PostgreSQL cluster of the stack's
// own, SQL (advanced) visibility, 4 history shards, the namespace and search attributes registered
// through the operator service. `AUTHCAP_TEMPORAL=postgres npm start` runs it instead of the dev server.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { ensureNamespaceReady } from '../runtime/temporalSetup.js';
import { goInstallCached } from './goInstall.js';
import { startPostgres, type Postgres } from './postgres.js';
import { freeLowPort, freePort, startProcess, waitFor, type ManagedProcess } from './process.js';

const run = promisify(execFile);

/** The server release the Temporal CLI v1.5.1 is built on: one Temporal for both topologies. */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
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
  process: ManagedProcess;
  postgres: Postgres;
  /** Stops the server, then PostgreSQL. */
  stop(): Promise<void>;
  /** Starts the server again on the same ports and database; `kill`: SIGKILL it first, as a crash would. */
  restartServer(options?: { kill?: boolean }): Promise<void>;
  restartPostgres(): Promise<void>;
}

async function binaries(log: (line: string) => void): Promise<{ server: string; sqlTool: string }> {
  if (process.env.TEMPORAL_SERVER_PATH && process.env.TEMPORAL_SQL_TOOL_PATH) {
    return { server: process.env.TEMPORAL_SERVER_PATH, sqlTool: process.env.TEMPORAL_SQL_TOOL_PATH };
  }
  const [server, sqlTool] = await goInstallCached(
    {
      title: 'the Temporal server',
      folder: 'temporal-server',
      version: TEMPORAL_SERVER_VERSION,
      packages: ['go.temporal.io/server/cmd/server', 'go.temporal.io/server/cmd/tools/sql'],
      overrideVariable: 'TEMPORAL_SERVER_PATH and TEMPORAL_SQL_TOOL_PATH',
    },
    log,
  );
  return { server: server!, sqlTool: sqlTool! };
}

export async function startTemporalOnPostgres(options: TemporalOnPostgresOptions): Promise<TemporalOnPostgres> {
  const { server, sqlTool } = await binaries(options.log);
  const home = join(options.stateDir, 'temporal-server');
  mkdirSync(join(home, 'config'), { recursive: true, mode: 0o700 });
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
    const ports = {
      grpc: options.port,
      http: await freePort(),
      metrics: options.metricsPort ?? (await freePort()),
      internal: await Promise.all(Array.from({ length: 7 }, () => freeLowPort())),
    };
    writeFileSync(join(home, 'config', 'development.yaml'), serverConfig(postgres, ports, join(home, 'dynamicconfig.yaml')), { mode: 0o600 });
    writeFileSync(join(home, 'dynamicconfig.yaml'), DYNAMIC_CONFIG, { mode: 0o600 });
    const address = `127.0.0.1:${options.port}`;
    const startServer = () =>
      startProcess({
        name: 'temporal',
        command: server,
        args: ['--root', home, '--config', 'config', '--env', 'development', '--allow-no-auth', 'start'],
        onOutput: options.onOutput,
        readyTimeoutMs: 120_000,
        ready: () =>
          waitFor(async () => {
            const connection = await Connection.connect({ address, connectTimeout: 1_000 });
            try {
              await connection.workflowService.getSystemInfo({});
              return true;
            } finally {
              await connection.close();
            }
          }, 250),
      });
    let serverProcess = await startServer();
    const connection = await Connection.connect({ address });
    try {
      const report = await ensureNamespaceReady(connection, options.namespace);
      if (report.namespaceCreated) options.log(`authcap: namespace ${options.namespace} registered`);
      if (report.searchAttributesAdded.length > 0) options.log(`authcap: search attributes registered: ${report.searchAttributesAdded.join(', ')}`);
    } finally {
      await connection.close();
    }
    const result: TemporalOnPostgres = {
      address,
      namespace: options.namespace,
      process: serverProcess,
      postgres,
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
  const env = {
    ...process.env,
    SQL_PLUGIN: 'postgres12',
    SQL_HOST: postgres.host,
    SQL_PORT: String(postgres.port),
    SQL_USER: postgres.user,
    SQL_PASSWORD: postgres.password,
  };
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

// Visibility calls per namespace and frontend: the server's default (10/s) is sized for a cluster
// with many frontends; the feed, the CLI and the watcher's look-ups need more on one.
const DYNAMIC_CONFIG = `frontend.namespaceRPS.visibility:
  - value: 200
`;

function serverConfig(db: Postgres, ports: { grpc: number; http: number; metrics: number; internal: number[] }, dynamicConfigFile: string): string {
  const [historyGrpc, matchingGrpc, workerGrpc, frontendMembership, historyMembership, matchingMembership, workerMembership] = ports.internal;
  const store = (database: string, maxConns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${database}
        connectAddr: "${db.host}:${db.port}"
        connectProtocol: tcp
        user: ${db.user}
        password: "${db.password}"
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
  const service = (grpc: number, membership: number, extra = '') => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnIP: 127.0.0.1${extra}`;
  return `log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: ${HISTORY_SHARDS}
  datastores:
    default:${store('temporal', 20)}
    visibility:${store('temporal_visibility', 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: 127.0.0.1:${ports.metrics}
services:
  frontend:${service(ports.grpc, frontendMembership!, `\n      httpPort: ${ports.http}`)}
  history:${service(historyGrpc!, historyMembership!)}
  matching:${service(matchingGrpc!, matchingMembership!)}
  worker:${service(workerGrpc!, workerMembership!)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:${ports.grpc}
      httpAddress: 127.0.0.1:${ports.http}
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${dynamicConfigFile}
  pollInterval: 10s
`;
}
