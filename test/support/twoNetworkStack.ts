// The dev stack on two networks (anvils 31337 and 31338, USDC on both, DEUR18 on the second), in
// this test process, on free ports and a temporary state dir: its own Temporal, chains and codec key,
// nothing of the suite's stack nor of an operator's chain (their variables are set aside until stop).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from '../../devstack/process.js';
import { startStack, type Stack, type StackOptions } from '../../devstack/stack.js';

const SET_ASIDE = ['AUTHCAP_CODEC_KEYS', 'TEMPORAL_ADDRESS', 'MERCHANT_PRIVATE_KEY', 'AUTHCAP_CONFIG'];

export async function startTwoNetworkStack(
  label: string,
  options: Partial<StackOptions> = {},
): Promise<{ stack: Stack; stateDir: string; stop(): Promise<void> }> {
  const saved = Object.fromEntries(SET_ASIDE.map((name) => [name, process.env[name]]));
  for (const name of SET_ASIDE) delete process.env[name];
  const restore = () => {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  };
  const stateDir = join(mkdtempSync(join(tmpdir(), `authcap-${label}-`)), 'state');
  try {
    const stack = await startStack({
      stateDir,
      apiPort: await freePort(),
      rpcPort: await freePort(),
      // Not rpcPort + 1: that one may be taken, other stacks run beside this one.
      moreRpcPorts: [await freePort()],
      temporalPort: await freePort(),
      temporalUiPort: await freePort(),
      persistent: false,
      headless: true,
      blockTimeSeconds: 0.2,
      networks: 2,
      log: () => undefined,
      ...options,
    });
    return {
      stack,
      stateDir,
      async stop() {
        await stack.stop();
        restore();
        rmSync(dirname(stateDir), { recursive: true, force: true });
      },
    };
  } catch (err) {
    restore();
    throw err;
  }
}
