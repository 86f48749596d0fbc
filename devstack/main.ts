// `npm start`: the whole main job on embedded defaults, until Ctrl-C.
import { resolve } from 'node:path';
import { startStack } from './stack.js';

function port(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw ? Number(raw) : fallback;
  if (!Number.isInteger(value) || value < 1 || value > 65_535) throw new Error(`${name} must be a port number, got "${raw}"`);
  return value;
}

const stateDir = resolve(process.env.AUTHCAP_STATE_DIR ?? '.authcap');
console.log('authcap: starting the dev stack (Temporal dev server, anvil, worker, API)…');
const stack = await startStack({
  stateDir,
  apiPort: port('AUTHCAP_API_PORT', 8080),
  rpcPort: port('AUTHCAP_RPC_PORT', 8545),
  temporalPort: port('TEMPORAL_PORT', 7233),
  temporalUiPort: port('TEMPORAL_UI_PORT', 8233),
  persistent: true,
});
const { devJson } = stack;
console.log(`
authcap is up.
  API          ${devJson.apiUrl}            (try: curl ${devJson.apiUrl}/healthz)
  Temporal UI  ${devJson.temporalUiUrl ?? '(external cluster)'}
  Temporal     ${devJson.temporalAddress} namespace ${devJson.temporalNamespace}
  Chain        ${devJson.rpcUrl} (chain id ${devJson.chainId}), token ${devJson.tokenAddress}
  Merchant     ${devJson.merchantAddress}
  Payers       ${devJson.payers.length} funded demo payers
  Settings     ${resolve(stateDir, 'dev.json')}
Ctrl-C stops everything.`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log('\nauthcap: stopping…');
    void stack.stop().then(() => {
      console.log('authcap: stopped.');
      process.exit(0);
    });
  });
}
