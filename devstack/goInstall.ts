// Go tools the project needs but cannot download as release binaries here: built once with
// `go install` (the Go module proxy is reachable) into a cache outside the repository, under a lock
// so that `npm start` and `npm test` started together build only once.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { withoutSecrets } from './childEnv.js';

const run = promisify(execFile);

export function cacheDir(): string {
  return process.env.AUTHCAP_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'authcap');
}

export function executable(name: string): string {
  return process.platform === 'win32' ? `${name}.exe` : name;
}

export interface GoTool {
  /** For messages: "the Temporal CLI". */
  title: string;
  /** The cache folder under cacheDir(): "temporal-cli". */
  folder: string;
  version: string;
  /** Packages to install, each `module/path/cmd/name` (the binary is named after the last element). */
  packages: string[];
  /** An environment variable naming a binary to use instead, for the message. */
  overrideVariable: string;
}

/** The cached binary of each package, or undefined if one is missing. */
export function cachedBinaries(tool: GoTool): string[] | undefined {
  const paths = tool.packages.map((pkg) => join(cacheDir(), tool.folder, tool.version, executable(pkg.split('/').pop()!)));
  return paths.every((path) => existsSync(path)) ? paths : undefined;
}

/** The tool's binaries: cached, or built now (a few minutes, once, with a visible message while it builds). */
export async function goInstallCached(tool: GoTool, log: (line: string) => void): Promise<string[]> {
  return cachedBinaries(tool) ?? withBuildLock(tool.folder, async () => cachedBinaries(tool) ?? build(tool, log));
}

async function build(tool: GoTool, log: (line: string) => void): Promise<string[]> {
  const home = join(cacheDir(), tool.folder);
  const staging = join(home, `.build-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  log(`authcap: building ${tool.title} ${tool.version} with go install — this takes a few minutes, once.`);
  log(`authcap: it is cached in ${join(home, tool.version)} (set ${tool.overrideVariable} to use your own).`);
  const started = Date.now();
  const ticker = setInterval(() => log(`authcap: still building ${tool.title} (${Math.round((Date.now() - started) / 1000)} s)…`), 30_000);
  try {
    for (const pkg of tool.packages) {
      await run('go', ['install', `${pkg}@${tool.version}`], {
        env: { ...withoutSecrets(), GOBIN: staging, GOFLAGS: '-mod=mod', CGO_ENABLED: process.env.CGO_ENABLED ?? '0' },
        maxBuffer: 64 * 1024 * 1024,
      });
    }
  } finally {
    clearInterval(ticker);
  }
  mkdirSync(join(home, tool.version), { recursive: true });
  for (const pkg of tool.packages) {
    const name = executable(pkg.split('/').pop()!);
    renameSync(join(staging, name), join(home, tool.version, name));
  }
  rmSync(staging, { recursive: true, force: true });
  log(`authcap: ${tool.title} ${tool.version} built in ${Math.round((Date.now() - started) / 1000)} s.`);
  return cachedBinaries(tool)!;
}

async function withBuildLock<T>(folder: string, fn: () => Promise<T>): Promise<T> {
  const lock = join(cacheDir(), folder, '.lock');
  mkdirSync(join(cacheDir(), folder), { recursive: true });
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
