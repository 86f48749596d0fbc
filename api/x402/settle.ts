// An x402 settle is an authorization like any other: the payload stored as a pre-signed
// TransferWithAuthorization under an order id that is the payment itself (x402OrderId), then captured
// by the merchant's relayer. So it is exactly once by construction: the same payload settled again
// (a retry after a timeout, two servers racing) finds the same authorization and answers with the one
// transaction that paid it; a payload the payer already used elsewhere is answered with that
// transaction, once the chain shows it paid this authorization's recipient its amount.
import type { AuthorizationResource } from '../../domain/authorization.js';
import { AuthcapError } from '../../domain/errors.js';
import type { AuthcapClient } from '../../client/authcapClient.js';
import { createLogger } from '../../runtime/logger.js';
import type { X402ChainChecks } from './chainChecks.js';
import type { LandingWatch } from './landingWatch.js';
import { sameAuthorization, windowRefusal, x402OrderId, type X402Payment } from './payment.js';
import { reasonForCode, X402Refusal } from './reasons.js';
import type { SettleResponse } from './wire.js';

const logger = createLogger('authcap-x402');

/** How long a settle waits for its transfer to be at its confirmation depth before answering `settlement_pending`: inside the SDK's 90 s. */
export const SETTLE_WAIT_MS = 75_000;
/** Clock skew allowed when looking for a transfer made before this settle (x402's own v1 clients sign 600 s back). */
const SIGNING_SKEW_SECONDS = 600;

export interface SettleDeps {
  client: AuthcapClient;
  chain: X402ChainChecks;
  nowMs?: () => number;
  /** At most this long for the transfer (SETTLE_WAIT_MS). */
  waitMs?: number;
  /** Sees the transfer in a block before the capture's record does (absent: the record answers). */
  landing?: LandingWatch;
}

/** The answer for one payment; throws only for what says nothing of the payment (an outage before anything started). */
export async function settlePayment(payment: X402Payment, maxTimeoutSeconds: number | undefined, deps: SettleDeps): Promise<SettleResponse> {
  const now = deps.nowMs ?? Date.now;
  // Past validBefore the transfer can no longer happen: waiting until then makes the answer certain.
  const until = Math.min(now() + (deps.waitMs ?? SETTLE_WAIT_MS), Number(payment.authorization.validBefore) * 1000 + 3_000);
  const answer = answers(payment);
  // A window that closed (or is about to) sends nothing new, but a settle asked again after a
  // `settlement_pending` still learns what became of the payment.
  const late = windowRefusal(payment.authorization, Math.floor(now() / 1000));
  if (late) return settledBefore(payment, deps).then((paid) => (paid ? answer.paid(paid) : answer.refused(late)));
  let id: string;
  try {
    id = await authorizationOf(payment, deps);
  } catch (err) {
    if (err instanceof AuthcapError && err.code === 'nonce_already_used') {
      // Used before authcap saw it: the payer (or another facilitator) may have sent this very payment.
      const signedSince = Number(payment.authorization.validBefore) - (maxTimeoutSeconds ?? 3_600) - SIGNING_SKEW_SECONDS;
      const paid = await deps.chain.payingTransaction(payment, signedSince);
      if (paid) return answer.paid(paid);
    }
    return answer.refused(refusalOf(err));
  }
  const settled = payment.hold ? held(id, payment, until, deps, now) : captured(id, payment, until, deps, now);
  return settled.catch((err: unknown) => answer.refused(refusalOf(err)));
}

/** The transaction that paid this payment through authcap, if an earlier settle made one. */
async function settledBefore(payment: X402Payment, { client }: SettleDeps): Promise<string | undefined> {
  const id = await client.authorizations.idForOrder(x402OrderId(payment)).catch((err: unknown) => {
    if (err instanceof AuthcapError && err.code === 'not_found') return undefined;
    throw err;
  });
  if (!id) return undefined;
  const stored = await client.authorizations.get(id);
  const same = stored.authorization && sameAuthorization(stored.authorization, payment.authorization);
  if (!same) return undefined;
  if (payment.hold) return authorizedHold(stored);
  return stored.state === 'captured' && stored.capture?.by === 'authcap' ? stored.capture.transactionHash : undefined;
}

/** The payment's authorization: stored now, or the one an earlier settle of the same payload stored. */
async function authorizationOf(payment: X402Payment, { client }: SettleDeps): Promise<string> {
  const orderId = x402OrderId(payment);
  try {
    const created = await client.authorizations.create({
      orderId,
      primaryType: payment.primaryType,
      authorization: payment.authorization,
      signature: payment.signature,
      ...(payment.hold ? { hold: payment.hold } : {}),
      domain: payment.domain,
      network: payment.network,
      token: payment.token.address,
      ...(payment.resource ? { resource: payment.resource } : {}),
    });
    return created.id;
  } catch (err) {
    const existing =
      err instanceof AuthcapError && (err.code === 'order_has_open_authorization' || err.code === 'order_already_captured') ? err.details?.id : undefined;
    if (typeof existing !== 'string') throw err;
    // The order is the (payer, nonce): only another payload under the same nonce can differ, and it never pays this one.
    const stored = await recorded(client, existing);
    // Not on record yet even after the wait: which payload it is cannot be told, so neither a yes nor a no.
    if (!stored.authorization) throw new X402Refusal('settlement_pending', 'another settle of this payment is starting; settle again to learn its outcome');
    if (!sameAuthorization(stored.authorization, payment.authorization))
      throw new X402Refusal('invalid_exact_evm_nonce_already_used', 'another authorization of this payer with the same nonce is already being settled');
    return existing;
  }
}

/** How long a settle racing another one waits for the other's authorization to be on record. */
const RECORD_WAIT_MS = 5_000;

/**
 * The authorization another settle of the same payment started: its record names the signed
 * authorization once its first task ended, a moment after its id was taken.
 */
async function recorded(client: AuthcapClient, id: string): Promise<AuthorizationResource> {
  const deadline = Date.now() + RECORD_WAIT_MS;
  let current = await client.authorizations.get(id);
  while (!current.authorization && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    current = await client.authorizations.get(id);
  }
  return current;
}

/**
 * Captures (or joins the capture under way) and answers once the transfer is in a block: the landing
 * watch sees it there, a block or more before the capture's own record reaches its depth; a capture
 * refused, or one the watch cannot see, is answered by the command.
 */
async function captured(id: string, payment: X402Payment, until: number, deps: SettleDeps, now: () => number): Promise<SettleResponse> {
  const watch = deps.landing?.watch(payment, until);
  const commanded = capturedByCommand(id, payment, until, deps, now);
  if (!watch) return commanded;
  try {
    const first = await Promise.race([commanded.then((answer) => ({ answer })), watch.landed.then((hash) => ({ hash }))]);
    if ('answer' in first) return first.answer;
    if (first.hash) {
      commanded.catch(() => undefined);
      return answers(payment).paid(first.hash);
    }
    return await commanded;
  } finally {
    watch.stop();
  }
}

/** The capture command's outcome, and its record's transaction once at the confirmation depth. */
async function capturedByCommand(id: string, payment: X402Payment, until: number, deps: SettleDeps, now: () => number): Promise<SettleResponse> {
  const { client } = deps;
  const answer = answers(payment);
  let current: AuthorizationResource;
  try {
    const outcome = await client.authorizations.capture(id, { waitMs: Math.max(0, until - now()) });
    current = outcome.authorization;
  } catch (err) {
    const refusal = refusalOf(err);
    // Refused for what the payment is (funds, nonce, signature): nothing moved; the authorization is
    // voided so none is left open that a later capture could still take.
    if (refusal.reason !== 'settlement_pending' && refusal.reason !== 'unexpected_settle_error') {
      await client.authorizations.void(id, { reason: `x402 settle refused: ${refusal.reason}`, by: 'x402' }).catch((voidErr: unknown) => {
        logger.warn({ err: voidErr, id }, 'a refused x402 payment could not be voided; it expires at its validBefore');
      });
      return answer.refused(refusal);
    }
    current = await client.authorizations.get(id);
  }
  // Another settle of the same payload started the capture: follow it until it is at depth.
  current = await whileIn(client, current, 'capturing', until, now);
  if (current.state === 'captured' && current.capture) {
    if (current.capture.by === 'authcap') return answer.paid(current.capture.transactionHash);
    // Someone else used the nonce meanwhile: believed only if that transaction paid this authorization.
    const paid = await deps.chain.payingTransaction(payment, Math.floor(now() / 1000) - 3_600);
    return paid ? answer.paid(paid) : answer.refused(new X402Refusal('invalid_exact_evm_nonce_already_used', 'the payer used this nonce for another transfer'));
  }
  if (current.state === 'capturing' || current.state === 'stored') {
    // The authorization records its transaction once at depth; until then the node's pending view may show it.
    const sent = current.capture?.transactionHash ?? (await deps.chain.pendingTransaction(payment));
    return answer.refused(
      new X402Refusal(
        'settlement_pending',
        sent
          ? 'the transfer is sent and not yet at its confirmation depth; settle again to learn its outcome'
          : 'the transfer is not seen on the chain yet; settle again to learn its outcome',
      ),
      sent ?? '',
    );
  }
  return answer.refused(recordedRefusal(current));
}

/**
 * auth-capture: the hold is placed by the authorization's own workflow once it is stored; the answer
 * is its authorize transaction once at depth. Capturing, voiding and refunding it are the merchant's,
 * through authcap's API.
 */
async function held(id: string, payment: X402Payment, until: number, { client, chain }: SettleDeps, now: () => number): Promise<SettleResponse> {
  const answer = answers(payment);
  const current = await whileIn(client, await client.authorizations.get(id), 'holding', until, now);
  const authorized = authorizedHold(current);
  if (authorized) return answer.paid(authorized);
  if (current.state === 'holding')
    return answer.refused(
      new X402Refusal('settlement_pending', 'the hold is not at its confirmation depth yet; settle again to learn its outcome'),
      current.hold?.authorizeTransactionHash ?? (await chain.pendingTransaction(payment)) ?? '',
    );
  return answer.refused(recordedRefusal(current));
}

/** The authorization once it is no longer in `state`, or as it stands at `until` (long polls of at most 30 s). */
async function whileIn(client: AuthcapClient, current: AuthorizationResource, state: string, until: number, now: () => number): Promise<AuthorizationResource> {
  let latest = current;
  while (latest.state === state && now() < until) {
    latest = await client.authorizations.wait(latest.id, { waitSeconds: Math.min(30, Math.max(1, Math.ceil((until - now()) / 1000))), state });
  }
  return latest;
}

/** Why an authorization that ended without paying did: its recorded error as a reason code. */
function recordedRefusal(current: AuthorizationResource): X402Refusal {
  if (!current.lastError) return new X402Refusal('invalid_transaction_state', `the authorization is ${current.state}`);
  const { code, message } = current.lastError;
  return new X402Refusal(reasonForCode(code) ?? 'invalid_transaction_state', `${code}: ${message}`);
}

/** The authorize transaction of a hold the escrow took (at depth), if it did. */
function authorizedHold(authorization: AuthorizationResource): string | undefined {
  const hold = authorization.hold;
  return hold?.authorizeTransactionHash && hold.amountHeld !== '0' ? hold.authorizeTransactionHash : undefined;
}

/** What a failure says to an x402 server: its reason code, never an HTTP error for the payment's own fault. */
function refusalOf(err: unknown): X402Refusal {
  if (err instanceof X402Refusal) return err;
  if (err instanceof AuthcapError) {
    const reason = reasonForCode(err.code);
    if (reason) return new X402Refusal(reason, err.message);
    // An outage (Temporal, the worker, the node) after the payment may have started: not a "no".
    return new X402Refusal('settlement_pending', `${err.code}: ${err.message}; settle again to learn the outcome`);
  }
  logger.error({ err }, 'x402 settle failed unexpectedly');
  return new X402Refusal('unexpected_settle_error', 'the settle failed unexpectedly; settle again to learn the outcome');
}

function answers(payment: X402Payment) {
  const base = { payer: payment.authorization.from, network: payment.requestedNetwork };
  return {
    paid: (transaction: string): SettleResponse => ({ success: true, ...base, transaction, amount: payment.authorization.value }),
    refused: (refusal: X402Refusal, transaction = ''): SettleResponse => ({
      success: false,
      errorReason: refusal.reason,
      errorMessage: refusal.message,
      ...base,
      transaction,
    }),
  };
}
