// `npm start`: the whole main job on embedded defaults, until Ctrl-C.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startStack } from './stack.js';
import type { DevNetworkCount } from './devNetworks.js';
import { startNotices, usesExternalChain } from './externalChain.js';
import { installSafetyNet, safeLog, supervise } from './supervisor.js';
import type { Settings } from '../runtime/settings/catalog.js';
import { readSettings } from '../runtime/settings/read.js';

// Before anything starts: from here on a stray error is logged, never fatal (see supervisor.ts).
installSafetyNet();

let settings: Settings<'dev-stack'>;
let workerSettings: Settings<'worker'>;
let externalChain: boolean;
let networks: DevNetworkCount;
try {
  // Every variable the dev stack reads, validated now (runtime/settings/catalog.ts): each wrong one named.
  settings = readSettings('dev-stack');
  // And the worker's, which the stack's chain policy (validity, reconcile, watcher) is made of.
  workerSettings = readSettings('worker');
  externalChain = usesExternalChain();
  networks = externalChain ? 1 : settings.AUTHCAP_DEV_NETWORKS;
  // Settings that mean nothing on this chain are said to be ignored, never dropped in silence.
  for (const notice of startNotices()) console.log(`authcap: ${notice}`);
} catch (err) {
  safeLog(`authcap: could not start: ${(err as Error).message}`);
  process.exit(1);
}
const stateDir = resolve(settings.AUTHCAP_STATE_DIR);
const topology = settings.AUTHCAP_TEMPORAL;
const temporalPart = settings.TEMPORAL_ADDRESS
  ? 'Temporal at TEMPORAL_ADDRESS'
  : topology === 'postgres'
    ? 'Temporal server on PostgreSQL'
    : 'Temporal dev server';
const chainPart = externalChain ? `the chains of ${settings.AUTHCAP_CONFIG}` : networks === 2 ? 'two anvils (chains 31337 and 31338)' : 'anvil';
const parts = [temporalPart, chainPart, 'workers', 'APIs'];
console.log(`authcap: starting the dev stack (${parts.join(', ')})…`);
// A stack that cannot start says why and exits 1 (the safety net below would otherwise keep an idle process).
const stack = await startStack({
  stateDir,
  apiPort: settings.AUTHCAP_API_PORT,
  rpcPort: settings.AUTHCAP_RPC_PORT,
  // AUTHCAP_DEV_NETWORKS=2: a second anvil, on AUTHCAP_RPC_PORT + 1.
  networks,
  temporalPort: settings.TEMPORAL_PORT,
  temporalUiPort: settings.TEMPORAL_UI_PORT,
  persistent: true,
  log: safeLog,
  // Worker (with its watcher) and API as their own processes: a crash stays in one process, and
  // the supervisor below then stops the rest instead of leaving a half-working stack behind.
  separateProcesses: true,
  settings,
  workerSettings,
}).catch((err: Error) => {
  safeLog(`authcap: could not start: ${err.message}`);
  process.exit(1);
});
const { devJson } = stack;
console.log(`
authcap is up.
  API          ${devJson.apiUrls.join(', ')}            (try: curl ${devJson.apiUrl}/healthz)
  Temporal UI  ${devJson.temporalUiUrl ?? '(external cluster)'}${devJson.temporalUiTokenFile ? `  operator token ${readFileSync(devJson.temporalUiTokenFile, 'utf8').trim()} (kept in ${devJson.temporalUiTokenFile})` : ''}
  Temporal     ${devJson.temporalAddress} namespace ${devJson.temporalNamespace}${devJson.temporalConfigFile ? `, mutual TLS: export TEMPORAL_CONFIG_FILE=${devJson.temporalConfigFile}` : ''}
  Chain        ${devJson.rpcUrl} (chain id ${devJson.chainId}${externalChain ? '' : ', anvil'}), token ${devJson.tokenAddress}
${
  devJson.networks.length > 1
    ? `  Networks     ${devJson.networks.map((n) => `${n.network} at ${n.rpcUrl}: ${n.tokens.map((t) => `${t.symbol} ${t.address} (${t.decimals} decimals)`).join(', ')}`).join('; ')}; requests name their "network" (and "token" where there are two)
`
    : ''
}  Config       ${devJson.configFile} (AUTHCAP_CONFIG of the worker and API)
  Merchant     ${devJson.merchantAddress}
  Payers       ${
    externalChain
      ? devJson.payers.length
        ? `${devJson.payers.length} from AUTHCAP_DEMO_PAYER_KEYS (their keys in dev.json)`
        : 'none (set AUTHCAP_DEMO_PAYER_KEYS to list payers of your chain in dev.json)'
      : `${devJson.payers.length} funded demo payers`
  }
  API keys     order-service, operator and x402 facilitator keys in dev.json (apiKey, operatorApiKey, facilitatorApiKey); more: npx authcap keys create --role operator
  Codec        ${devJson.codecUrl ? `payloads encrypted; the Web UI decodes them through ${devJson.codecEndpoint} for your OS user only${process.platform === 'linux' ? '' : " (not on this OS: paste codecUrl from dev.json into the UI's codec settings)"}` : 'off (AUTHCAP_CODEC=off)'}
  Webhooks     ${devJson.webhook ? `every event to ${devJson.webhook.url} (endpoint ${devJson.webhook.id}; signing secret in dev.json: webhook.secret)` : 'none (set AUTHCAP_WEBHOOK_URL to have npm start register one)'}
  Processes    worker pids ${(stack.processes.workers ?? []).map((p) => p.child.pid).join(', ')}, API pids ${(stack.processes.apis ?? []).map((p) => p.child.pid).join(', ')}; logs in ${stateDir} (worker*.log, api*.log${devJson.temporalTopology === 'postgres' ? ', temporal.log' : ''})
  Settings     ${resolve(stateDir, 'dev.json')}
Ctrl-C stops everything.`);

const supervisor = supervise({ stop: () => stack.stop() });
const { workers = [], apis = [], temporal, temporalUi, anvils = [] } = stack.processes;
for (const proc of [...workers, ...apis, temporal, temporalUi, ...anvils, stack.temporalCluster?.postgres.process]) if (proc) supervisor.watch(proc);
