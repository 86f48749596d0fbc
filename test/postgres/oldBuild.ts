// An earlier build of authcap, for the rolling deploy: a commit of this repository exported from git
// into a directory of its own, built by that commit's own scripts/build.ts (tsc to dist/, its
// workflow bundle), and its worker run from there, so the old worker is that release's real code.
// A build is kept per commit (it never changes), so only the first run pays for it.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { variablesReadBy } from '../../devstack/childEnv.js';
import { startProcess, type ManagedProcess } from '../../devstack/process.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

async function commitSha(commit: string): Promise<string> {
  return (await run('git', ['rev-parse', '--verify', `${commit}^{commit}`], { cwd: root })).stdout.trim();
}

/** The directory holding `commit` built (dist/ and a node_modules link); built now if it is not yet. */
export async function buildOfCommit(commit: string): Promise<string> {
  let sha: string;
  try {
    sha = await commitSha(commit).catch(async (err) => {
      // A shallow clone (CI's, often) lacks older commits: ask its origin for this one, once.
      if ((await run('git', ['rev-parse', '--is-shallow-repository'], { cwd: root })).stdout.trim() !== 'true') throw err;
      await run('git', ['fetch', '--quiet', '--depth=1', 'origin', commit], { cwd: root });
      return commitSha(commit);
    });
  } catch (err) {
    const reason = (err as { stderr?: string }).stderr?.trim() || (err as Error).message;
    throw new Error(`the rolling deploy runs the old build ${commit} from this repository's git history, which is not available here (${reason})`);
  }
  const dir = join(tmpdir(), 'authcap-builds', sha);
  // The build script writes its stamp last: a directory without one is a build that died half-way.
  if (existsSync(join(dir, 'dist', '.build-stamp'))) {
    // Kept from another checkout (or one since removed): its packages are this checkout's now.
    linkPackages(dir);
    return dir;
  }
  rmSync(dir, { recursive: true, force: true });
  const staging = `${dir}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    await run('git', ['archive', '--format=tar', `--output=${staging}.tar`, sha], { cwd: root });
    await run('tar', ['-xf', `${staging}.tar`, '-C', staging]);
    linkPackages(staging);
    await run(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: staging, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`building ${commit} failed: ${(err as { stderr?: string }).stderr || (err as Error).message}`);
  } finally {
    rmSync(`${staging}.tar`, { force: true });
  }
  try {
    renameSync(staging, dir);
  } catch {
    // Another test process built it at the same time: theirs is as good.
    rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}

/** That build's worker process (dist/worker/main.js), ready once it says it polls. */
export function startBuiltWorker(buildDir: string, env: Record<string, string>, onOutput: (chunk: string) => void): Promise<ManagedProcess> {
  let output = '';
  return startProcess({
    name: 'worker (old build)',
    command: process.execPath,
    args: [join(buildDir, 'dist', 'worker', 'main.js')],
    cwd: buildDir,
    env,
    inherit: variablesReadBy('worker'),
    readyTimeoutMs: 120_000,
    onOutput: (chunk) => {
      output = (output + chunk).slice(-4096);
      onOutput(chunk);
    },
    ready: async (proc) => {
      while (!output.includes('authcap worker: task queue')) {
        if (proc.child.exitCode !== null) throw new Error(`the old build's worker exited: ${proc.tail()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
  });
}

/** The same packages as this checkout: the commits compared share one lockfile's worth of node_modules. */
function linkPackages(dir: string): void {
  const link = join(dir, 'node_modules');
  rmSync(link, { force: true });
  symlinkSync(join(root, 'node_modules'), link);
}
