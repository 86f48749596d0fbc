// The dev stack for the browser tests, started the way `npm start` starts it (devstack/stack.ts with
// the worker and the API as their own processes) on free ports and the state dir it is given. It
// runs in a process of its own so it shares nothing with the integration suite's in-process stack
// (environment, umask, the Temporal runtime singleton). Prints one line with dev.json when up;
// SIGTERM stops everything.
import { freePort } from '../../devstack/process.js';
import { startStack } from '../../devstack/stack.js';

/** globalSetup.ts waits for this prefix. */
const READY_PREFIX = 'authcap-browser-stack ';

const stateDir = process.env.AUTHCAP_STATE_DIR;
if (!stateDir) throw new Error('AUTHCAP_STATE_DIR must name a temporary state dir');
const stack = await startStack({
  stateDir,
  apiPort: await freePort(),
  rpcPort: await freePort(),
  temporalPort: await freePort(),
  temporalUiPort: await freePort(),
  persistent: false,
  // The Web UI too: test/browser/temporalUiVoid.test.ts voids through it, as an operator does.
  headless: false,
  separateProcesses: true,
  blockTimeSeconds: 0.2,
  log: (line) => console.error(line),
});
console.log(`${READY_PREFIX}${JSON.stringify({ devJson: stack.devJson, codecKeys: process.env.AUTHCAP_CODEC_KEYS ?? '' })}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void stack.stop().finally(() => process.exit(0));
  });
}
