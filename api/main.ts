// `npm run api`: the HTTP API as its own process, against the configured Temporal.
//   AUTHCAP_API_PORT (8080), AUTHCAP_STATE_DIR (.authcap: API keys, idempotency answers),
//   AUTHCAP_KEYS_FILE, AUTHCAP_IDEMPOTENCY_DATABASE_URL (Idempotency-Key answers shared by API processes
//   on several hosts; else files in AUTHCAP_IDEMPOTENCY_DIR, shared on one host), AUTHCAP_MERCHANT_ADDRESS (comma-separated with several keys; never a payer),
//   AUTHCAP_CONFIG (the deployment file: the networks and tokens served, their nodes for /readyz, the checkout
//   pages and to check a contract wallet's signature before it reaches a workflow), AUTHCAP_CODEC_KEYS (payload encryption,
//   required unless AUTHCAP_CODEC=off), AUTHCAP_PUBLIC_URL (where payers reach the checkout pages;
//   default this API's own URL), AUTHCAP_CHECKOUT_SECRET (checkout link secret; default a file
//   checkout-secret in the state dir), AUTHCAP_MERCHANT_NAME (the name payers see),
//   AUTHCAP_REFUND_WINDOW_DAYS (how long after its capture an authorization accepts refunds, 30),
//   AUTHCAP_MAX_WAITS_PER_KEY (100) and AUTHCAP_MAX_WAITS (1000): long polls open at once per key and per process.
import { join } from 'node:path';
import type { Address } from 'viem';
import { requireCodec } from '../runtime/codec.js';
import { loadTemporalSettings } from '../runtime/temporal.js';
import { tracingPluginFromEnv } from '../runtime/tracing.js';
import { ApiKeyStore } from '../client/apiKeys.js';
import { AuthcapClient } from '../client/authcapClient.js';
import { createApiServer, listen } from './server.js';
import { PostgresIdempotencyStore } from './idempotencyPostgres.js';
import { WaitLimits } from './waitLimits.js';
import { RateLimiter } from './rateLimit.js';
import { setLogLevel } from '../runtime/logger.js';
import { settingsOrExit } from '../runtime/settings/read.js';
import { cpuProfileOnSignal } from '../runtime/cpuProfiler.js';
import { deploymentConfigured, loadDeployment } from '../runtime/deployment/load.js';
import { resolveDeployment, retryUnavailable } from '../runtime/deployment/resolve.js';

// Every variable the API reads, validated now (runtime/settings/catalog.ts): a wrong one stops the
// start with its name, and every wrong one is named at once.
const settings = settingsOrExit('api', 'authcap API');
setLogLevel(settings.AUTHCAP_LOG_LEVEL ?? 'info');
cpuProfileOnSignal('api', settings.AUTHCAP_CPU_PROFILE_DIR);

requireCodec(process.env);
const stateDir = settings.AUTHCAP_STATE_DIR;
// The merchant's addresses: never a payer, and the only recipients /x402/settle pays. The served
// tokens are refused as payers too (api/server.ts), from the deployment.
const merchantAddresses = (settings.AUTHCAP_MERCHANT_ADDRESS ?? '')
  .split(',')
  .map((a) => a.trim())
  .filter(Boolean) as Address[];
const forbiddenPayers = merchantAddresses.map((address) => ({ address, why: 'the merchant itself' }));
// The networks and tokens served (the deployment file, AUTHCAP_CONFIG; read by
// runtime/deployment/load.ts alone): checked against their chains now, so a wrong entry stops the
// start with its name. A network whose node does not answer waits: requests on it are
// `chain_unavailable` and /readyz names it, the others serve, and it serves once its node answers.
// Without a file, the API takes requests that name no network and leaves the chain to the worker.
const deployment = deploymentConfigured(process.env)
  ? await resolveDeployment(loadDeployment(process.env, { keys: false }), { degraded: true }).catch((err: Error) => {
      console.error(`authcap API: ${err.message}`);
      process.exit(1);
    })
  : undefined;
for (const waiting of deployment?.unavailable ?? []) console.warn(`authcap API: ${waiting.network} waits for its node: ${waiting.reason}`);
const retrying =
  deployment && deployment.unavailable.length > 0
    ? retryUnavailable(deployment, {
        onResolved: (network) => console.warn(`authcap API: ${network.network} answers: served from now on`),
        log: (line) => console.warn(`authcap API: ${line}`),
      })
    : undefined;
// The first network's node, for /readyz and the checkout pages of requests that name no network.
const rpcUrl = deployment?.networks[0]?.rpcUrls[0] ?? deployment?.unavailable[0]?.rpcUrls[0];
// Idempotency-Key answers where every API process of the deployment finds them: the database
// (checked now, its table made if missing), else this host's files.
const idempotency = settings.AUTHCAP_IDEMPOTENCY_DATABASE_URL
  ? await PostgresIdempotencyStore.open(settings.AUTHCAP_IDEMPOTENCY_DATABASE_URL).catch((err: Error) => {
      console.error(`authcap API: ${err.message}`);
      process.exit(1);
    })
  : { dir: settings.AUTHCAP_IDEMPOTENCY_DIR ?? join(stateDir, 'idempotency') };
// With the chain at hand, a signature that is not the payer's own is judged before any workflow sees it.
const tracing = tracingPluginFromEnv('authcap-client');
const client = await AuthcapClient.connect(loadTemporalSettings({}, process.env), {
  rpcUrl,
  deployment,
  refundWindowDays: settings.AUTHCAP_REFUND_WINDOW_DAYS,
  webhookAddressPolicy: { allowLoopback: settings.AUTHCAP_WEBHOOK_ALLOW_LOOPBACK, allowPrivate: settings.AUTHCAP_WEBHOOK_ALLOW_PRIVATE },
  plugins: tracing ? [tracing] : [],
});
const server = createApiServer({
  client,
  keys: ApiKeyStore.open(ApiKeyStore.fileOf(settings), { apiKey: settings.AUTHCAP_API_KEY }),
  idempotency,
  forbiddenPayers,
  merchantAddresses,
  rpcUrl,
  deployment,
  // One link secret per host: every API process on it accepts the links the others hand out.
  checkout: { stateDir, publicUrl: settings.AUTHCAP_PUBLIC_URL, secret: settings.AUTHCAP_CHECKOUT_SECRET, merchantName: settings.AUTHCAP_MERCHANT_NAME },
  captureWaitMs: settings.AUTHCAP_CAPTURE_WAIT_MS,
  waitLimits: new WaitLimits({ perKey: settings.AUTHCAP_MAX_WAITS_PER_KEY, perProcess: settings.AUTHCAP_MAX_WAITS }),
  rateLimiter: new RateLimiter(settings.AUTHCAP_RATE_LIMIT),
  publicRateLimiter: new RateLimiter(settings.AUTHCAP_PUBLIC_RATE_LIMIT),
  workerReadyzUrl: settings.AUTHCAP_WORKER_READYZ_URL,
});
const url = await listen(server, settings.AUTHCAP_API_PORT, settings.AUTHCAP_API_HOST);
console.log(`authcap API listening on ${url}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    retrying?.stop();
    server.closeAllConnections();
    const closeStore = 'close' in idempotency ? () => idempotency.close() : async () => undefined;
    server.close(() => void Promise.all([client.close(), closeStore()]).then(() => process.exit(0)));
  });
}
