// The dev stack on two networks (chains 31337 and 31338), for test/browser/checkoutNetworks.test.ts:
// the same startStack call as test/browser/stackProcess.ts with `networks: 2`, headless, on free
// ports and the state dir it is given. Its own process, for the same reasons as that file. Prints
// one line with dev.json when up; SIGTERM stops everything.
import { freePort } from '../../../devstack/process.js';
import { startStack } from '../../../devstack/stack.js';

/** networksStack.ts waits for this prefix. */
const READY_PREFIX = 'authcap-networks-stack ';

const stateDir = process.env.AUTHCAP_STATE_DIR;
if (!stateDir) throw new Error('AUTHCAP_STATE_DIR must name a temporary state dir');
const stack = await startStack({
  stateDir,
  apiPort: await freePort(),
  rpcPort: await freePort(),
  // Not rpcPort + 1: that one may be taken, the suite's other stacks run beside this one.
  moreRpcPorts: [await freePort()],
  temporalPort: await freePort(),
  temporalUiPort: await freePort(),
  persistent: false,
  headless: true,
  separateProcesses: true,
  blockTimeSeconds: 0.2,
  networks: 2,
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
