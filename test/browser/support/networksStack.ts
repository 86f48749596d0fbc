// A two-network stack for one test file (support/networksStackProcess.ts in a process tree of its
// own): the browser suite's stack serves one network, and telling it to serve two would slow every
// other browser test for the sake of one file. Started in beforeAll, stopped in afterAll.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import type { DevJson } from '../../../devstack/stack.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const READY_PREFIX = 'authcap-networks-stack ';
const START_TIMEOUT_MS = 170_000;

/** What the browser suite's globalSetup clears: the stack must not pick up a developer's settings. */
const CLEARED = [
  'TEMPORAL_ADDRESS',
  'MERCHANT_PRIVATE_KEY',
  'MERCHANT_PRIVATE_KEYS',
  'AUTHCAP_API_KEY',
  'AUTHCAP_CODEC_KEYS',
  'AUTHCAP_CODEC_KEY_FILE',
  'AUTHCAP_CODEC',
  'AUTHCAP_PUBLIC_URL',
  'AUTHCAP_CHECKOUT_SECRET',
  'AUTHCAP_MERCHANT_NAME',
  'AUTHCAP_CONFIG',
  'AUTHCAP_DEV_NETWORKS',
];

/** The stack's dev.json once beforeAll has it up. */
export function useNetworksStack(): () => DevJson {
  let running: { devJson: DevJson; stop: () => Promise<void> } | undefined;
  beforeAll(async () => {
    running = await startNetworksStack();
  }, START_TIMEOUT_MS + 10_000);
  afterAll(async () => {
    await running?.stop();
  }, 60_000);
  return () => {
    if (!running) throw new Error('the two-network stack is not up');
    return running.devJson;
  };
}

async function startNetworksStack(): Promise<{ devJson: DevJson; stop: () => Promise<void> }> {
  const stateDir = mkdtempSync(join(tmpdir(), 'authcap-browser-networks-'));
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CLEARED) delete env[name];
  Object.assign(env, { AUTHCAP_STATE_DIR: stateDir, AUTHCAP_MERCHANT_NAME: 'Example Shop' });
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/browser/support/networksStackProcess.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = async () => {
    await stopChild(child);
    rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    return { devJson: await readyLine(child), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  // The stack stops Temporal, the anvils, the worker and the API in turn: give it time before forcing.
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

function readyLine(child: ChildProcess): Promise<DevJson> {
  return new Promise<DevJson>((resolve, reject) => {
    let stdout = '';
    let tail = '';
    const timer = setTimeout(() => reject(new Error(`the two-network stack was not up after ${START_TIMEOUT_MS / 1000} s:\n${tail}`)), START_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((l) => l.startsWith(READY_PREFIX));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line.slice(READY_PREFIX.length)));
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4_000);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the two-network stack exited (code ${code}) before it was up:\n${tail}`));
    });
  });
}
