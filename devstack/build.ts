// The compiled build (`npm run build`, dist/): the worker, the API and the codec server run from it
// as plain JavaScript, with the workflow bundle made once at build time, so no long-running process
// carries a TypeScript loader, webpack or source-map hooks. A build older than any source file is
// stale: processes then run from source through tsx, as a developer editing files expects.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const distDir = join(root, 'dist');
/** Written last by a successful build: its time is the build's. */
export const buildStamp = join(distDir, '.build-stamp');
/** What the build compiles, and what decides whether it is stale. */
export const builtSources = [
  'domain',
  'runtime',
  'workflows',
  'activities',
  'worker',
  'client',
  'api',
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
];

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** True when dist/ holds a build of the sources as they are now. */
export function buildIsFresh(): boolean {
  if (!existsSync(buildStamp)) return false;
  const built = statSync(buildStamp).mtimeMs;
  return builtSources.every((source) => !existsSync(join(root, source)) || newestMtime(join(root, source)) <= built);
}

/** How to run a process entry (`worker/main.ts`): from the build when it is fresh, else through tsx. */
export function processCommand(entry: string): { args: string[]; built: boolean } {
  if (process.env.AUTHCAP_FROM_SOURCE !== '1' && buildIsFresh()) return { args: [join(distDir, entry.replace(/\.ts$/, '.js'))], built: true };
  return { args: ['--import', 'tsx', entry], built: false };
}
