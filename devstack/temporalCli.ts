// Finds the Temporal CLI, in the order DEVELOPERS.md sets: TEMPORAL_CLI_PATH, `temporal` on PATH, a
// cached build, else one `go install` into a cache outside the repository. No release binary can be
// downloaded on these machines, but the Go module proxy is reachable.
import { existsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { cachedBinaries, executable, goInstallCached, type GoTool } from './goInstall.js';

export { cacheDir } from './goInstall.js';

/** v1.5.1 is the last release installable with `go install`; older ones are fallbacks only. */
export const TEMPORAL_CLI_VERSIONS = ['v1.5.1', 'v1.5.0', 'v1.4.1'] as const;

const cliTool = (version: string): GoTool => ({
  title: 'the Temporal CLI',
  folder: 'temporal-cli',
  version,
  packages: ['github.com/temporalio/cli/cmd/temporal'],
  overrideVariable: 'TEMPORAL_CLI_PATH',
});

function onPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, executable('temporal'));
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
    const cached = cachedBinaries(cliTool(version));
    if (cached) return cached[0]!;
  }
  const failures: string[] = [];
  for (const version of TEMPORAL_CLI_VERSIONS) {
    try {
      return (await goInstallCached(cliTool(version), log))[0]!;
    } catch (err) {
      failures.push(`${version}: ${(err as Error).message.split('\n').slice(-5).join(' ')}`);
      log(`authcap: building Temporal CLI ${version} failed; trying the next older release`);
    }
  }
  throw new Error(`Could not build the Temporal CLI with go install (is Go installed?). Set TEMPORAL_CLI_PATH to a temporal binary.\n${failures.join('\n')}`);
}
