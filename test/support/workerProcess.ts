// A second worker as its own OS process, against the same Temporal and chain as the suite's stack.
import { fileURLToPath } from 'node:url';
import { variablesReadBy } from '../../devstack/childEnv.js';
import { startProcess, type ManagedProcess } from '../../devstack/process.js';
import { processCommand } from '../../devstack/build.js';
import { devAccounts } from '../../devstack/token.js';
import type { DevJson } from '../../devstack/stack.js';

export async function startWorkerProcess(dev: DevJson, env: Record<string, string> = {}): Promise<ManagedProcess> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  let output = '';
  return startProcess({
    name: 'second worker',
    command: process.execPath,
    cwd: root,
    args: processCommand('worker/main.ts').args,
    env: {
      TEMPORAL_ADDRESS: dev.temporalAddress,
      TEMPORAL_NAMESPACE: dev.temporalNamespace,
      // The suite stack's own deployment file: its networks, its keys named MERCHANT_PRIVATE_KEY.
      AUTHCAP_CONFIG: dev.configFile,
      MERCHANT_PRIVATE_KEY: devAccounts().merchant.privateKey,
      AUTHCAP_RECONCILE_SECONDS: '2',
      AUTHCAP_WATCH: '0',
      ...env,
    },
    inherit: variablesReadBy('worker'),
    readyTimeoutMs: 90_000,
    onOutput: (chunk) => {
      output += chunk;
    },
    ready: async () => {
      while (!output.includes('authcap worker:')) await new Promise((r) => setTimeout(r, 100));
    },
  });
}
