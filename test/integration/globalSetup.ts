// One real stack per test run: Temporal dev server, anvil (0.2 s blocks) with our compiled token,
// the worker and the HTTP API, all on free 127.0.0.1 ports, state in a temporary directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePort } from '../../devstack/process.js';
import { startStack, type DevJson, type Stack } from '../../devstack/stack.js';
import { defaultOf } from '../../runtime/settings/read.js';
import { withSuiteLongPollExpiry } from '../support/suiteLongPolls.js';

declare module 'vitest' {
  export interface ProvidedContext {
    devJson: DevJson;
    stateDir: string;
    codecKeys: string;
  }
}

let stack: Stack | undefined;
let stateDir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  stateDir = mkdtempSync(join(tmpdir(), 'authcap-test-'));
  // The suite must not pick up a developer's cluster or chain from the environment.
  for (const name of [
    'TEMPORAL_ADDRESS',
    'AUTHCAP_CONFIG',
    'MERCHANT_PRIVATE_KEY',
    'AUTHCAP_API_KEY',
    'AUTHCAP_CODEC_KEYS',
    'AUTHCAP_CODEC_KEY_FILE',
    'AUTHCAP_CODEC',
  ])
    delete process.env[name];
  // Reconcile often so tests see outside consumption quickly; the product default is 15 s.
  process.env.AUTHCAP_RECONCILE_SECONDS = '2';
  // Polls that find nothing end sooner than the server's minute: the rogue-poller tests wait for that.
  process.env.AUTHCAP_TEMPORAL_DYNAMIC_CONFIG = withSuiteLongPollExpiry(defaultOf('AUTHCAP_TEMPORAL_DYNAMIC_CONFIG')).join(',');
  stack = await startStack({
    stateDir,
    apiPort: await freePort(),
    rpcPort: await freePort(),
    temporalPort: await freePort(),
    temporalUiPort: await freePort(),
    persistent: false,
    headless: true,
    blockTimeSeconds: 0.2,
    log: (line) => console.log(line),
  });
  project.provide('devJson', stack.devJson);
  // Test files run in their own processes: they need the payload keys to read what the workers wrote.
  project.provide('codecKeys', process.env.AUTHCAP_CODEC_KEYS ?? '');
  project.provide('stateDir', stateDir);
}

export async function teardown(): Promise<void> {
  // AUTHCAP_RECORD_HISTORIES=1 refreshes the replay tests' histories from this run (see scripts/recordHistories.ts).
  try {
    if (process.env.AUTHCAP_RECORD_HISTORIES === '1' && stack) {
      const { execFileSync } = await import('node:child_process');
      execFileSync(process.execPath, ['--import', 'tsx', 'scripts/recordHistories.ts'], {
        env: { ...process.env, TEMPORAL_ADDRESS: stack.devJson.temporalAddress, TEMPORAL_NAMESPACE: stack.devJson.temporalNamespace },
        stdio: 'inherit',
      });
    }
  } finally {
    await stack?.stop();
  }
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
}
