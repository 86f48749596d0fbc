// The production shape's Temporal server is a small Go program of ours (devstack/temporal-server:
// go.temporal.io/server pinned by its go.mod, with a claim mapper for client certificates), and
// temporal-sql-tool from the same pinned module. `go build` fetches the modules through the Go module
// proxy the first time; the binaries are cached outside the repository under a name that changes
// with the program's source, so an edit rebuilds them and nothing else does.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { withoutSecrets } from './childEnv.js';
import { cacheDir, executable } from './goInstall.js';

const run = promisify(execFile);

/** The server release go.mod pins (the one the Temporal CLI v1.5.1 embeds). */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
const SOURCE_DIR = fileURLToPath(new URL('./temporal-server/', import.meta.url));
const SQL_TOOL_PACKAGE = 'go.temporal.io/server/cmd/tools/sql';

export interface TemporalServerBinaries {
  server: string;
  sqlTool: string;
}

/** TEMPORAL_SERVER_PATH and TEMPORAL_SQL_TOOL_PATH when both are set; else the cached build, built now if missing. */
export async function temporalServerBinaries(log: (line: string) => void): Promise<TemporalServerBinaries> {
  if (process.env.TEMPORAL_SERVER_PATH && process.env.TEMPORAL_SQL_TOOL_PATH) {
    return { server: process.env.TEMPORAL_SERVER_PATH, sqlTool: process.env.TEMPORAL_SQL_TOOL_PATH };
  }
  const folder = join(cacheDir(), 'temporal-server-mtls', `${TEMPORAL_SERVER_VERSION}-${sourceDigest()}`);
  const binaries = { server: join(folder, executable('temporal-server')), sqlTool: join(folder, executable('temporal-sql-tool')) };
  const built = () => existsSync(binaries.server) && existsSync(binaries.sqlTool);
  if (built()) return binaries;
  return withLock(`${folder}.lock`, async () => {
    if (!built()) await build(folder, binaries, log);
    return binaries;
  });
}

/** The Go program's own files (go.mod, go.sum, *.go): what the cached build was made from. */
function sourceDigest(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(SOURCE_DIR).sort()) {
    if (file === 'go.mod' || file === 'go.sum' || file.endsWith('.go'))
      hash
        .update(file)
        .update('\0')
        .update(readFileSync(join(SOURCE_DIR, file)))
        .update('\0');
  }
  return hash.digest('hex').slice(0, 12);
}

async function build(folder: string, binaries: TemporalServerBinaries, log: (line: string) => void): Promise<void> {
  const staging = `${folder}.build-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  log(`authcap: building the Temporal server ${TEMPORAL_SERVER_VERSION} with mTLS authorization (go build) — this takes a few minutes, once.`);
  log(`authcap: it is cached in ${folder} (set TEMPORAL_SERVER_PATH and TEMPORAL_SQL_TOOL_PATH to use your own build of devstack/temporal-server).`);
  const started = Date.now();
  const ticker = setInterval(() => log(`authcap: still building the Temporal server (${Math.round((Date.now() - started) / 1000)} s)…`), 30_000);
  try {
    // go.sum pins every module; -mod=readonly refuses to change it rather than resolve anew.
    await run('go', ['build', '-mod=readonly', '-ldflags=-s -w', '-o', staging, '.', SQL_TOOL_PACKAGE], {
      cwd: SOURCE_DIR,
      env: { ...withoutSecrets(), CGO_ENABLED: process.env.CGO_ENABLED ?? '0' },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    throw new Error(`building the Temporal server failed: ${(err as { stderr?: string }).stderr || (err as Error).message}`);
  } finally {
    clearInterval(ticker);
  }
  mkdirSync(folder, { recursive: true });
  renameSync(join(staging, executable('sql')), binaries.sqlTool);
  // The server last: its presence says the build is whole.
  renameSync(join(staging, executable('temporal-server')), binaries.server);
  rmSync(staging, { recursive: true, force: true });
  log(`authcap: the Temporal server built in ${Math.round((Date.now() - started) / 1000)} s.`);
}

/** One build at a time per machine (npm start and npm test started together): a lock directory naming its owner. */
async function withLock<T>(lock: string, fn: () => Promise<T>): Promise<T> {
  mkdirSync(join(lock, '..'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      if (ownerIsGone(lock)) rmSync(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function ownerIsGone(lock: string): boolean {
  try {
    process.kill(Number(readFileSync(join(lock, 'pid'), 'utf8')), 0);
    return false;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // EPERM: the owner lives, as another user. No pid file: being taken now, or its taker died at once.
    if (code === 'ENOENT') return Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0) > 10_000;
    return code !== 'EPERM';
  }
}
