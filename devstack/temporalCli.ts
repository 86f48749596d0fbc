// Finds the Temporal CLI, in the order DEVELOPERS.md sets: TEMPORAL_CLI_PATH, `temporal` on PATH, a
// cached build, else one `go install` into a cache outside the repository. No release binary can be
// downloaded on these machines, but the Go module proxy is reachable.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** v1.5.1 is the last release installable with `go install`; older ones are fallbacks only. */
export const TEMPORAL_CLI_VERSIONS = ['v1.5.1', 'v1.5.0', 'v1.4.1'] as const;

export function cacheDir(): string {
  return process.env.AUTHCAP_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'authcap');
}

function binaryName(): string {
  return process.platform === 'win32' ? 'temporal.exe' : 'temporal';
}

function cachedBinary(version: string): string {
  return join(cacheDir(), 'temporal-cli', version, binaryName());
}

function onPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, binaryName());
    if (dir && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

export async function resolveTemporalCli(log: (line: string) => void = (l) => console.log(l)): Promise<string> {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`TEMPORAL_CLI_PATH points to ${fromEnv}, which does not exist`);
    return fromEnv;
  }
  const fromPath = onPath();
  if (fromPath) return fromPath;
  for (const version of TEMPORAL_CLI_VERSIONS) {
    if (existsSync(cachedBinary(version))) return cachedBinary(version);
  }
  return withBuildLock(async () => {
    // Another process may have finished the build while we waited for the lock.
    for (const version of TEMPORAL_CLI_VERSIONS) if (existsSync(cachedBinary(version))) return cachedBinary(version);
    const failures: string[] = [];
    for (const version of TEMPORAL_CLI_VERSIONS) {
      try {
        return await buildTemporalCli(version, log);
      } catch (err) {
        failures.push(`${version}: ${(err as Error).message.split('\n').slice(-5).join(' ')}`);
        log(`authcap: building Temporal CLI ${version} failed; trying the next older release`);
      }
    }
    throw new Error(
      `Could not build the Temporal CLI with go install (is Go installed?). Set TEMPORAL_CLI_PATH to a temporal binary.\n${failures.join('\n')}`,
    );
  });
}

async function buildTemporalCli(version: string, log: (line: string) => void): Promise<string> {
  const target = cachedBinary(version);
  const staging = join(cacheDir(), 'temporal-cli', `.build-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  log(`authcap: building the Temporal CLI ${version} with go install — this takes a few minutes, once.`);
  log(`authcap: it is cached in ${join(cacheDir(), 'temporal-cli', version)} (set TEMPORAL_CLI_PATH to use your own).`);
  const started = Date.now();
  const ticker = setInterval(() => log(`authcap: still building the Temporal CLI (${Math.round((Date.now() - started) / 1000)} s)…`), 30_000);
  try {
    await run('go', ['install', `github.com/temporalio/cli/cmd/temporal@${version}`], {
      env: { ...process.env, GOBIN: staging, GOFLAGS: '-mod=mod', CGO_ENABLED: process.env.CGO_ENABLED ?? '0' },
      maxBuffer: 64 * 1024 * 1024,
    });
  } finally {
    clearInterval(ticker);
  }
  mkdirSync(join(cacheDir(), 'temporal-cli', version), { recursive: true });
  renameSync(join(staging, binaryName()), target);
  rmSync(staging, { recursive: true, force: true });
  log(`authcap: Temporal CLI ${version} built in ${Math.round((Date.now() - started) / 1000)} s.`);
  return target;
}

/** A lock directory so that `npm start` and `npm test` started together build only once. */
async function withBuildLock<T>(fn: () => Promise<T>): Promise<T> {
  const lock = join(cacheDir(), 'temporal-cli', '.lock');
  mkdirSync(join(cacheDir(), 'temporal-cli'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      if (lockIsStale(lock)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function lockIsStale(lock: string): boolean {
  try {
    const pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
    process.kill(pid, 0);
    return false;
  } catch (err) {
    // EPERM means the process exists but belongs to someone else: not stale.
    return (err as NodeJS.ErrnoException).code !== 'EPERM';
  }
}
