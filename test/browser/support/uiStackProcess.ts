// The dev stack with its Temporal Web UI, for test/browser/temporalUiVoid.test.ts while the browser
// suite's own stack (test/browser/stackProcess.ts) runs headless: the same startStack call as that
// file with `headless: false`, which is what `npm start` runs (the CLI dev server's embedded UI,
// given the codec server as `--ui-codec-endpoint`; the codec server trusts that UI's origin for this
// OS user). Prints one line with dev.json when up; SIGTERM stops everything.
import { freePort } from '../../../devstack/process.js';
import { startStack } from '../../../devstack/stack.js';

/** support/uiStack.ts waits for this prefix. */
const READY_PREFIX = 'authcap-ui-stack ';

const stateDir = process.env.AUTHCAP_STATE_DIR;
if (!stateDir) throw new Error('AUTHCAP_STATE_DIR must name a temporary state dir');
const stack = await startStack({
  stateDir,
  apiPort: await freePort(),
  rpcPort: await freePort(),
  temporalPort: await freePort(),
  temporalUiPort: await freePort(),
  persistent: false,
  headless: false,
  separateProcesses: true,
  blockTimeSeconds: 0.2,
  log: (line) => console.error(line),
});
console.log(`${READY_PREFIX}${JSON.stringify(stack.devJson)}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void stack.stop().finally(() => process.exit(0));
  });
}
