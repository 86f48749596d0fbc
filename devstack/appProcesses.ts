// The worker (with its log watcher) and the HTTP API as their own OS processes, so each can fail,
// be killed or be restarted alone (npm start, the fault suite).
import { fileURLToPath } from 'node:url';
import { startProcess, type ManagedProcess } from './process.js';
import { processCommand } from './build.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Runs from the build (dist/) when it is fresh, else from source through tsx. */
function spawnEntry(name: string, entry: string, readyLine: string, env: Record<string, string>, onOutput?: (chunk: string) => void): Promise<ManagedProcess> {
  let output = '';
  return startProcess({
    name,
    command: process.execPath,
    cwd: root,
    args: processCommand(entry).args,
    env,
    readyTimeoutMs: 120_000,
    onOutput: (chunk) => {
      output = (output + chunk).slice(-4096);
      onOutput?.(chunk);
    },
    ready: async (proc) => {
      while (!output.includes(readyLine)) {
        if (proc.child.exitCode !== null) throw new Error(`${name} exited: ${proc.tail()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  });
}

export function startWorkerProcess(env: Record<string, string>, onOutput?: (chunk: string) => void): Promise<ManagedProcess> {
  return spawnEntry('worker', 'worker/main.ts', 'authcap worker:', env, onOutput);
}

export function startApiProcess(env: Record<string, string>, onOutput?: (chunk: string) => void): Promise<ManagedProcess> {
  return spawnEntry('api', 'api/main.ts', 'authcap API listening on', env, onOutput);
}
