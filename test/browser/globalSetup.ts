// The browser suite's stack: the dev stack as `npm start` runs it (test/browser/stackProcess.ts, its
// own process tree), on free ports and a temporary state dir. Without Chromium nothing starts and
// the suite is skipped with a line saying how to install it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import type { DevJson } from '../../devstack/stack.js';
import { findChromium, INSTALL_HINT } from './support/chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Empty when no Chromium was found: the browser tests skip. */
    chromiumPath: string;
  }
}

const READY_PREFIX = 'authcap-browser-stack ';
const root = fileURLToPath(new URL('../..', import.meta.url));
let child: ChildProcess | undefined;
let stateDir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  const chromium = findChromium();
  project.provide('chromiumPath', 'path' in chromium ? chromium.path : '');
  if (!('path' in chromium)) {
    console.warn(`\nauthcap: browser tests skipped: ${chromium.missing}; ${INSTALL_HINT}.\n`);
    return;
  }
  stateDir = mkdtempSync(join(tmpdir(), 'authcap-browser-'));
  // The stack must not pick up a developer's cluster, chain, keys or checkout settings.
  const cleared = [
    'TEMPORAL_ADDRESS',
    'AUTHCAP_CONFIG',
    'MERCHANT_PRIVATE_KEY',
    'MERCHANT_PRIVATE_KEYS',
    'AUTHCAP_API_KEY',
    'AUTHCAP_CODEC_KEYS',
    'AUTHCAP_CODEC_KEY_FILE',
    'AUTHCAP_CODEC',
    'AUTHCAP_PUBLIC_URL',
    'AUTHCAP_CHECKOUT_SECRET',
    'AUTHCAP_MERCHANT_NAME',
  ];
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of cleared) delete env[name];
  Object.assign(env, { AUTHCAP_STATE_DIR: stateDir, AUTHCAP_MERCHANT_NAME: 'Example Shop' });
  const started = spawn(process.execPath, ['--import', 'tsx', 'test/browser/stackProcess.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child = started;
  const { devJson, codecKeys } = await new Promise<{ devJson: DevJson; codecKeys: string }>((resolve, reject) => {
    let stdout = '';
    let tail = '';
    const timer = setTimeout(() => reject(new Error(`the browser suite's stack was not up after 180 s:\n${tail}`)), 180_000);
    started.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((l) => l.startsWith(READY_PREFIX));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line.slice(READY_PREFIX.length)));
      }
    });
    started.stderr!.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4_000);
    });
    started.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the browser suite's stack exited (code ${code}) before it was up:\n${tail}`));
    });
  }).catch(async (err) => {
    await teardown();
    throw err;
  });
  project.provide('devJson', devJson);
  project.provide('codecKeys', codecKeys);
  project.provide('stateDir', stateDir);
}

export async function teardown(): Promise<void> {
  const running = child;
  child = undefined;
  if (running && running.exitCode === null && running.signalCode === null) {
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    // Its stack stops Temporal, anvil, the worker and the API in turn: give it time before forcing.
    const timer = setTimeout(() => running.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  stateDir = undefined;
}
