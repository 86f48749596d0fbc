// `npm run api`: the HTTP API as its own process, against the configured Temporal.
//   AUTHCAP_API_PORT (8080), AUTHCAP_STATE_DIR (.authcap: API keys, idempotency answers),
//   AUTHCAP_KEYS_FILE, AUTHCAP_IDEMPOTENCY_DIR, TOKEN_ADDRESS and AUTHCAP_MERCHANT_ADDRESS (comma-separated with several keys; never a payer),
//   RPC_URL (for /readyz, the checkout pages' token symbol, and to check a contract wallet's signature
//   before it reaches a workflow), AUTHCAP_CODEC_KEYS (payload encryption,
//   required unless AUTHCAP_CODEC=off), AUTHCAP_PUBLIC_URL (where payers reach the checkout pages;
//   default this API's own URL), AUTHCAP_CHECKOUT_SECRET (checkout link secret; default a file
//   checkout-secret in the state dir), AUTHCAP_MERCHANT_NAME (the name payers see),
//   AUTHCAP_REFUND_WINDOW_DAYS (how long after its capture an authorization accepts refunds, 30),
//   AUTHCAP_MAX_WAITS_PER_KEY (100) and AUTHCAP_MAX_WAITS (1000): long polls open at once per key and per process.
import { join } from 'node:path';
import { requireCodec } from '../runtime/codec.js';
import { loadTemporalSettings } from '../runtime/temporal.js';
import { ApiKeyStore } from '../client/apiKeys.js';
import { AuthcapClient } from '../client/authcapClient.js';
import { refundWindowDays } from '../client/refunds.js';
import { createApiServer, listen } from './server.js';
import { WaitLimits } from './waitLimits.js';
import { cpuProfileOnSignal } from '../runtime/cpuProfiler.js';
import { loadDeployment } from '../runtime/deployment/load.js';
import { resolveDeployment } from '../runtime/deployment/resolve.js';

cpuProfileOnSignal('api');

requireCodec();
// A malformed setting stops the start, not every refund later.
refundWindowDays();
const waitLimits = WaitLimits.fromEnv();
const stateDir = process.env.AUTHCAP_STATE_DIR ?? '.authcap';
const forbiddenPayers = [
  ...(process.env.TOKEN_ADDRESS ? [{ address: process.env.TOKEN_ADDRESS, why: 'the token contract' }] : []),
  ...(process.env.AUTHCAP_MERCHANT_ADDRESS ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean)
    .map((address) => ({ address, why: 'the merchant itself' })),
];
// The networks and tokens served (AUTHCAP_CONFIG, or RPC_URL and TOKEN_ADDRESS for one): checked
// against their chains now, so a wrong entry stops the start with its name. Without either, the API
// takes requests that name no network and leaves the chain to the worker.
const deployment =
  process.env.AUTHCAP_CONFIG || (process.env.RPC_URL && process.env.TOKEN_ADDRESS)
    ? await resolveDeployment(loadDeployment(process.env, { keys: false })).catch((err: Error) => {
        console.error(`authcap API: ${err.message}`);
        process.exit(1);
      })
    : undefined;
// With the chain at hand, a signature that is not the payer's own is judged before any workflow sees it.
const client = await AuthcapClient.connect(loadTemporalSettings(), { rpcUrl: process.env.RPC_URL, deployment });
const server = createApiServer({
  client,
  keys: ApiKeyStore.open(ApiKeyStore.defaultFile()),
  idempotency: { dir: process.env.AUTHCAP_IDEMPOTENCY_DIR ?? join(stateDir, 'idempotency') },
  forbiddenPayers,
  rpcUrl: process.env.RPC_URL,
  deployment,
  // One link secret per host: every API process on it accepts the links the others hand out.
  checkout: { stateDir },
  captureWaitMs: process.env.AUTHCAP_CAPTURE_WAIT_MS ? Number(process.env.AUTHCAP_CAPTURE_WAIT_MS) : undefined,
  waitLimits,
});
const url = await listen(server, Number(process.env.AUTHCAP_API_PORT ?? 8080));
console.log(`authcap API listening on ${url}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.closeAllConnections();
    server.close(() => void client.close().then(() => process.exit(0)));
  });
}
