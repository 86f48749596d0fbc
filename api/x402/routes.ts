// authcap as an x402 facilitator (x402 v2 specification §7–8): POST /x402/verify, POST /x402/settle
// and GET /x402/supported, where `@x402/core`'s HTTPFacilitatorClient looks for them under the URL
// it is given (`${apiUrl}/x402`). Callers hold a `facilitator` API key, which may do nothing else.
// A payment refused is answered 200 with its reason code, as x402 servers expect; a request that is
// not a facilitator request at all is a 400 like any other API error.
import type { Address } from 'viem';
import { Counter, Histogram } from 'prom-client';
import { registry } from '../../runtime/metrics.js';
import type { AuthcapClient } from '../../client/authcapClient.js';
import type { ServedNetwork } from '../../runtime/deployment/catalog.js';
import type { Router } from '../router.js';
import { parseWith } from '../schemas.js';
import { AUTH_CAPTURE, supportedExtra } from './authCapture.js';
import { X402ChainChecks } from './chainChecks.js';
import { LandingWatch } from './landingWatch.js';
import { readPayment, type X402Payment } from './payment.js';
import { X402Refusal } from './reasons.js';
import { settlePayment } from './settle.js';
import { facilitatorRequestSchema, type FacilitatorRequest, type SettleResponse, type SupportedResponse, type VerifyResponse } from './wire.js';
import { X402_NETWORK_NAMES } from '../../runtime/deployment/schema.js';

export const FACILITATOR = ['facilitator'] as const;

const outcomes = new Counter({
  name: 'authcap_x402_requests_total',
  help: 'x402 verify and settle requests answered, by route and outcome (valid, settled, or the x402 reason code).',
  labelNames: ['route', 'outcome'] as const,
  registers: [registry],
});
const settleSeconds = new Histogram({
  name: 'authcap_x402_settle_seconds',
  help: 'Time from an x402 settle request to its answer, by outcome (settled, or the reason code).',
  labelNames: ['outcome'] as const,
  buckets: [0.25, 0.5, 1, 2, 3, 5, 10, 20, 45, 90],
  registers: [registry],
});

// The series dashboards and alerts select exist at zero before the first payment.
outcomes.inc({ route: 'verify', outcome: 'valid' }, 0);
outcomes.inc({ route: 'settle', outcome: 'settled' }, 0);
settleSeconds.zero({ outcome: 'settled' });

export interface X402Options {
  client: AuthcapClient;
  /** The networks served now (a network whose node answers late joins this list). */
  networks: () => readonly ServedNetwork[];
  /** Each served chain's node. */
  rpcUrlOf: (chainId: number) => string | undefined;
  /** The merchant's addresses (AUTHCAP_MERCHANT_ADDRESS): the only recipients settled to, and /supported's signers. */
  merchants: readonly Address[];
  /** How long a settle waits for its transfer (settle.ts's SETTLE_WAIT_MS). */
  settleWaitMs?: number;
}

export function registerX402Routes(router: Router, options: X402Options): void {
  const chain = new X402ChainChecks(options.rpcUrlOf);
  const landing = new LandingWatch(options.rpcUrlOf);
  router
    .on('GET', '/x402/supported', FACILITATOR, async () => ({ status: 200, body: supported(options) }))
    .on('POST', '/x402/verify', FACILITATOR, async ({ body }) => {
      const answer = await verify(judge(body, options));
      outcomes.inc({ route: 'verify', outcome: answer.isValid ? 'valid' : (answer.invalidReason ?? 'invalid') });
      return { status: 200, body: answer };
    })
    .on('POST', '/x402/settle', FACILITATOR, async ({ body }) => {
      const started = Date.now();
      const answer = await settle(judge(body, options, { checkWindow: false }));
      const outcome = answer.success ? 'settled' : (answer.errorReason ?? 'failed');
      outcomes.inc({ route: 'settle', outcome });
      settleSeconds.observe({ outcome }, (Date.now() - started) / 1000);
      return { status: 200, body: answer };
    });

  async function verify({ request, payment, refusal }: Judged): Promise<VerifyResponse> {
    if (!payment) return { isValid: false, invalidReason: refusal.reason, invalidMessage: refusal.message, ...payerOf(request) };
    try {
      await chain.assertPayable(payment);
    } catch (err) {
      if (!(err instanceof X402Refusal)) throw err;
      return { isValid: false, invalidReason: err.reason, invalidMessage: err.message, payer: payment.authorization.from };
    }
    return { isValid: true, payer: payment.authorization.from };
  }

  async function settle({ request, payment, refusal }: Judged): Promise<SettleResponse> {
    if (!payment) {
      const { network } = request.paymentRequirements;
      return { success: false, errorReason: refusal.reason, errorMessage: refusal.message, ...payerOf(request), transaction: '', network };
    }
    const maxTimeoutSeconds = request.paymentRequirements.maxTimeoutSeconds;
    return settlePayment(payment, maxTimeoutSeconds, { client: options.client, chain, landing, waitMs: options.settleWaitMs });
  }
}

type Judged =
  | { request: FacilitatorRequest; payment: X402Payment; refusal?: undefined }
  | { request: FacilitatorRequest; payment?: undefined; refusal: X402Refusal };

/** The request (400 when it is not a facilitator request at all), and its payment or why it cannot be paid. */
function judge(body: unknown, options: X402Options, read: { checkWindow?: boolean } = {}): Judged {
  const request = parseWith(facilitatorRequestSchema, body, 'the body');
  try {
    const context = { networks: options.networks(), merchants: options.merchants, nowSeconds: Math.floor(Date.now() / 1000), ...read };
    return { request, payment: readPayment(request, context) };
  } catch (err) {
    if (err instanceof X402Refusal) return { request, refusal: err };
    throw err;
  }
}

/** Who signed, as far as the request says, for a refusal's answer. */
function payerOf(request: FacilitatorRequest): { payer?: string } {
  const from = (request.paymentPayload.payload as { authorization?: { from?: unknown } }).authorization?.from;
  return typeof from === 'string' ? { payer: from } : {};
}

/** Exactly what this deployment settles: `exact` on every served network (v2 by CAIP-2; v1 where x402 names it), signed by the merchant's keys. */
function supported(options: X402Options): SupportedResponse {
  const kinds: SupportedResponse['kinds'] = [];
  for (const network of options.networks()) {
    if (network.tokens.length === 0) continue;
    kinds.push({ x402Version: 2, scheme: 'exact', network: network.network });
    const held = supportedExtra(network, options.merchants);
    if (held) kinds.push({ x402Version: 2, scheme: AUTH_CAPTURE, network: network.network, extra: held });
    const v1Name = Object.entries(X402_NETWORK_NAMES).find(([, id]) => id === network.network)?.[0];
    if (v1Name) kinds.push({ x402Version: 1, scheme: 'exact', network: v1Name });
  }
  return { kinds, extensions: [], signers: { 'eip155:*': [...options.merchants] } };
}
