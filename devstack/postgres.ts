// A PostgreSQL cluster of the stack's own, under the state dir: Debian's `postgresql` binaries,
// initdb'd on first start (password auth, the password kept in the state dir), listening on
// 127.0.0.1 only. PostgreSQL refuses to run as root: started as root, it runs as the `postgres` user
// (or `nobody`), which then owns its data folder.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { childEnv, withoutSecrets } from './childEnv.js';
import { startProcess, type ManagedProcess } from './process.js';

export interface Postgres {
  host: string;
  port: number;
  /** The cluster's superuser, which Temporal uses. */
  user: string;
  password: string;
  process: ManagedProcess;
  /** A fast shutdown (SIGINT): open sessions are rolled back, nothing committed is lost. */
  stop(): Promise<void>;
}

export interface PostgresOptions {
  dataDir: string;
  /** Where the superuser's password is kept (0600, the stack's own user). */
  passwordFile: string;
  port: number;
  log: (line: string) => void;
  onOutput?: (chunk: string) => void;
}

const SUPERUSER = 'temporal';

/** Debian installs each major version under /usr/lib/postgresql/<major>/bin; PATH is tried last. */
export function postgresBinDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.AUTHCAP_POSTGRES_BIN) return env.AUTHCAP_POSTGRES_BIN;
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const majors = readdirSync(debian)
      .filter((v) => existsSync(join(debian, v, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    if (majors[0]) return join(debian, majors[0], 'bin');
  }
  try {
    return dirname(execFileSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).trim()) || undefined;
  } catch {
    return undefined;
  }
}

/** Who runs the server: this user, or an unprivileged one when this is root. */
function runAs(): { uid: number; gid: number; name: string } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of [process.env.AUTHCAP_POSTGRES_OS_USER, 'postgres', 'nobody']) {
    if (!name) continue;
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { uid, gid, name };
    } catch {
      // no such user: the next one
    }
  }
  throw new Error('PostgreSQL cannot run as root and neither a postgres nor a nobody user exists: set AUTHCAP_POSTGRES_OS_USER');
}

/** The command as the unprivileged user (setpriv execs in place: signals reach the server itself). */
function command(bin: string, args: string[], user: ReturnType<typeof runAs>): { command: string; args: string[] } {
  if (!user) return { command: bin, args };
  return { command: 'setpriv', args: ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups', '--', bin, ...args] };
}

/**
 * Debian's postgresql where it is missing, as .ci/run installs Chromium: only as root with apt-get at
 * hand (a plain user is told what to install instead). Its own cluster (15/main) is left alone.
 */
function installPostgres(log: (line: string) => void): void {
  if (process.getuid?.() !== 0) return;
  try {
    execFileSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' });
  } catch {
    return;
  }
  log("authcap: PostgreSQL is missing: installing Debian's postgresql package (apt-get), once…");
  execFileSync('sh', ['-c', 'apt-get update -qq && apt-get install -y -qq postgresql'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...withoutSecrets(), DEBIAN_FRONTEND: 'noninteractive' },
  });
}

export async function startPostgres(options: PostgresOptions): Promise<Postgres> {
  if (!postgresBinDir()) installPostgres(options.log);
  const binDir = postgresBinDir();
  if (!binDir) {
    throw new Error(
      "PostgreSQL is not installed: install Debian's postgresql package (apt-get install postgresql; .ci/run does it), or set AUTHCAP_POSTGRES_BIN to its bin folder",
    );
  }
  const user = runAs();
  if (!existsSync(options.passwordFile)) writeFileSync(options.passwordFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
  const password = readFileSync(options.passwordFile, 'utf8').trim();
  if (!existsSync(join(options.dataDir, 'PG_VERSION'))) initdb(binDir, options, password, user);
  // The unprivileged user must reach its folder through the state dir, which the stack keeps 0700:
  // 0711 lets it pass without listing (every file in it stays 0600).
  if (user) chmodSync(dirname(options.dataDir), 0o711);
  const proc = await startProcess({
    name: 'postgres',
    ...command(
      join(binDir, 'postgres'),
      [
        '-D',
        options.dataDir,
        '-p',
        String(options.port),
        '-c',
        'listen_addresses=127.0.0.1',
        // Its socket stays in its own folder: nothing in /var/run, which a stack started as a plain user cannot write.
        '-c',
        `unix_socket_directories=${options.dataDir}`,
        // Temporal's services each keep a pool (default and visibility stores); room for two stacks' worth.
        '-c',
        'max_connections=300',
      ],
      user,
    ),
    onOutput: options.onOutput,
    readyTimeoutMs: 60_000,
    ready: async (p) => {
      while (!p.tail().includes('ready to accept connections')) await new Promise((r) => setTimeout(r, 100));
    },
  });
  return {
    host: '127.0.0.1',
    port: options.port,
    user: SUPERUSER,
    password,
    process: proc,
    stop: async () => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGINT');
      await proc.stop();
    },
  };
}

function initdb(binDir: string, options: PostgresOptions, password: string, user: ReturnType<typeof runAs>): void {
  options.log(`authcap: creating a PostgreSQL cluster in ${options.dataDir}${user ? ` (run as the ${user.name} user)` : ''}`);
  rmSync(options.dataDir, { recursive: true, force: true });
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  // initdb reads the password from a file it can read; it is removed as soon as initdb is done.
  const pwfile = `${options.dataDir}.pw`;
  writeFileSync(pwfile, password, { mode: 0o600 });
  if (user) {
    // Every folder above the state dir must let others pass too, as /tmp and /home do.
    chmodSync(dirname(options.dataDir), 0o711);
    chownSync(options.dataDir, user.uid, user.gid);
    chownSync(pwfile, user.uid, user.gid);
  }
  try {
    const initdbCommand = command(
      join(binDir, 'initdb'),
      ['-D', options.dataDir, '-U', SUPERUSER, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-locale', '--no-instructions'],
      user,
    );
    execFileSync(initdbCommand.command, initdbCommand.args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() });
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? '');
    throw new Error(
      `initdb failed${user ? ` (as ${user.name}: can it reach ${options.dataDir}? every folder above it must be passable by others)` : ''}: ${stderr.trim() || (err as Error).message}`,
    );
  } finally {
    rmSync(pwfile, { force: true });
  }
}

export interface AppDatabaseOptions {
  database: string;
  /** Its login role, which owns it and nothing else on the cluster. */
  role: string;
  /** Where the role's password is kept (0600); made on first use. */
  passwordFile: string;
  /** Databases the role must not even connect to (Temporal's). */
  closedTo?: string[];
}

/**
 * A database of authcap's own on the cluster, with a role of its own: made when missing, the role's
 * password set to the file's on every start. Returns its postgres:// URL.
 */
export async function ensureAppDatabase(postgres: Postgres, options: AppDatabaseOptions): Promise<string> {
  if (!existsSync(options.passwordFile)) writeFileSync(options.passwordFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
  const password = readFileSync(options.passwordFile, 'utf8').trim();
  const client = new pg.Client({ host: postgres.host, port: postgres.port, user: postgres.user, password: postgres.password, database: 'postgres' });
  await client.connect();
  try {
    const role = pg.escapeIdentifier(options.role);
    const roles = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [options.role]);
    // DDL takes no parameters: the password is quoted as a literal (it is base64url, but quoted all the same).
    await client.query(`${roles.rowCount ? 'ALTER' : 'CREATE'} ROLE ${role} LOGIN PASSWORD ${pg.escapeLiteral(password)}`);
    const databases = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [options.database]);
    if (!databases.rowCount) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(options.database)} OWNER ${role}`);
    for (const other of options.closedTo ?? []) await client.query(`REVOKE CONNECT ON DATABASE ${pg.escapeIdentifier(other)} FROM PUBLIC`);
  } finally {
    await client.end();
  }
  return `postgres://${encodeURIComponent(options.role)}:${encodeURIComponent(password)}@${postgres.host}:${postgres.port}/${encodeURIComponent(options.database)}`;
}
