// `npm start` as a user runs it (devstack/main.ts as its own process), with the suite's own stack
// kept out of its environment, on the ports and settings a test gives it.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DevJson } from '../../devstack/stack.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** What the suite's process may carry that would point npm start elsewhere. */
const SUITE_SETTINGS = [
  'TEMPORAL_ADDRESS',
  'AUTHCAP_CONFIG',
  'MERCHANT_PRIVATE_KEY',
  'MERCHANT_PRIVATE_KEYS',
  'AUTHCAP_MERCHANT_KEYS',
  'AUTHCAP_DEMO_PAYER_KEYS',
  'AUTHCAP_CODEC_KEYS',
  'AUTHCAP_CODEC_KEY_FILE',
  'AUTHCAP_CODEC',
  'AUTHCAP_WEBHOOK_URL',
];

export interface NpmStart {
  main: ChildProcess;
  exited: Promise<number | null>;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  dev: DevJson;
}

/** Resolves once the stack is up ("Ctrl-C stops everything."), with its dev.json. */
export async function startNpmStart(stateDir: string, settings: Record<string, string>): Promise<NpmStart> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SUITE_SETTINGS) delete env[name];
  Object.assign(env, { AUTHCAP_STATE_DIR: stateDir }, settings);
  const main = spawn(process.execPath, ['--import', 'tsx', 'devstack/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => main.once('exit', (code) => resolve(code)));
  let output = '';
  main.stdout!.on('data', (d) => (output += d));
  main.stderr!.on('data', (d) => (output += d));
  while (!output.includes('Ctrl-C stops everything.')) {
    if (main.exitCode !== null) throw new Error(`npm start exited (${main.exitCode}):\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const dev = JSON.parse(readFileSync(join(stateDir, 'dev.json'), 'utf8')) as DevJson;
  return { main, exited, output: () => output, dev };
}
