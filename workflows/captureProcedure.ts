// A capture: one local activity for the precheck and the simulation, then one activity that hands the
// call to the relayer and follows it to the confirmation depth, so the whole capture is the update's
// workflow task and the one that records its outcome. The relayer speaks only when something went
// wrong (it refused the call, its transaction reverted or was abandoned): then the follower is
// cancelled and the chain says what became of the nonce. Every way out ends in `endCapture`.
import { log, workflowInfo } from '@temporalio/workflow';
import type { CaptureOnchainResult } from '../domain/activityContract.js';
import type { AuthorizationView } from '../domain/authorization.js';
import { localReads } from './activities.js';
import { failureOf } from './failures.js';
import { followUnlessTroubled, type Followed } from './followOnchain.js';
import type { Lifecycle } from './lifecycle.js';
import { completePartialCapture } from './partialCaptureRelease.js';
import { lastErrorFailure, reconcile, settledMeanwhile, type ChainWindow } from './procedures.js';
import type { Relay } from './relayClient.js';

/** A follower is given the authorization's whole window, and then some: past validBefore nothing can land. */
const FOLLOW_MARGIN_MS = 10 * 60_000;

/** @param amount what to keep, in minor units: less than authorized is a partial capture. */
export async function capture(lifecycle: Lifecycle, relay: Relay, window: ChainWindow, amount?: string): Promise<AuthorizationView> {
  lifecycle.send({ type: 'CAPTURE_REQUESTED', ...(amount === undefined ? {} : { amount }) });
  const request = lifecycle.captureRequest();
  const { facts, prepared, fromBlock } = await localReads.prepareCaptureAttempt(request);
  const early = settledMeanwhile(lifecycle, 'captured');
  if (early) return early;
  lifecycle.send({ type: 'PRECHECKED', facts });
  // Refused by the precheck, or consumed onchain by someone else: find out by whom, and settle on the true state.
  if (!lifecycle.matches('capturing')) return endCapture(lifecycle, relay, facts.authorizationUsed ? window : undefined);
  if (prepared?.status === 'failed') lifecycle.send({ type: 'CAPTURE_FAILED', failure: prepared.failure });
  if (prepared?.status === 'consumed') lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain: prepared.onchain });
  if (prepared?.status === 'failed' || prepared?.status === 'consumed') return endCapture(lifecycle, relay);

  const { from, nonce, validBefore } = request.authorization;
  // One relayer request per attempt: a retry after a reverted attempt is a new transaction.
  const requestId = `capture:${from}:${nonce}:${lifecycle.captureAttempts}`;
  const { workflowId, runId } = workflowInfo();
  const first = await followUnlessTroubled(
    relay,
    { requestId, replyTo: { workflowId, runId }, call: { kind: 'capture', ...request }, ...(fromBlock === undefined ? {} : { fromBlock }) },
    { scheduleToCloseTimeout: Math.max(Number(validBefore) * 1000 - Date.now(), 0) + FOLLOW_MARGIN_MS, summary: `capture of ${lifecycle.context.orderId}` },
  );
  if (!lifecycle.matches('capturing')) return settledMeanwhile(lifecycle, 'captured') ?? lifecycle.view();
  if ('result' in first) record(lifecycle, first.result);
  else await recordTrouble(lifecycle, relay, window, requestId, first);
  return endCapture(lifecycle, relay);
}

/**
 * How a capture command ends, whatever path it took: when it is no longer capturing, the chain is
 * asked who consumed the nonce (`askChain`: the precheck saw it used), a partial capture's difference
 * goes back to the payer, and the caller gets the captured authorization or why not.
 */
async function endCapture(lifecycle: Lifecycle, relay: Relay, askChain?: ChainWindow): Promise<AuthorizationView> {
  if (askChain) await reconcile(lifecycle, askChain);
  await completePartialCapture(lifecycle, relay);
  if (lifecycle.state === 'captured') return lifecycle.view();
  throw lastErrorFailure(lifecycle);
}

/** The follower's outcome, as the machine's events, at the times the follower saw them. */
function record(lifecycle: Lifecycle, result: CaptureOnchainResult): void {
  if (result.status === 'expired') {
    lifecycle.send({ type: 'CAPTURE_FAILED', failure: { code: 'authorization_expired', message: 'the validity window closed before the capture was mined' } });
  } else if (result.status === 'consumed') {
    lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain: result.onchain });
  } else if (result.by === 'onchain') {
    const { transactionHash, blockNumber, blockHash } = result;
    lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain: { status: 'used', transactionHash, blockNumber, blockHash } });
  } else {
    const { transactionHash, blockNumber, blockHash } = result;
    lifecycle.send({ type: 'CAPTURE_SUBMITTED', transactionHash }, result.submittedAt);
    lifecycle.send({ type: 'CAPTURE_PRECONFIRMED', blockNumber, blockHash }, result.preconfirmedAt);
    lifecycle.send({ type: 'CAPTURE_CONFIRMED', transactionHash, blockNumber, blockHash }, result.confirmedAt);
  }
}

/** The relayer refused, reverted or abandoned the capture, or the follower failed for good: the chain has the last word. */
async function recordTrouble(
  lifecycle: Lifecycle,
  relay: Relay,
  window: ChainWindow,
  requestId: string,
  outcome: Exclude<Followed, { result: unknown }>,
): Promise<void> {
  if ('error' in outcome) log.warn('following the capture failed for good', { orderId: lifecycle.context.orderId, error: failureOf(outcome.error).message });
  // Whatever the relayer or the follower says, the nonce may be used.
  await reconcile(lifecycle, window).catch(() => undefined);
  if (!lifecycle.matches('capturing')) return;
  const answer = relay.answer(requestId);
  lifecycle.send({
    type: 'CAPTURE_FAILED',
    failure: answer?.failure
      ? { ...answer.failure, message: answer.transactionHash ? `${answer.failure.message} (${answer.transactionHash})` : answer.failure.message }
      : 'error' in outcome
        ? failureOf(outcome.error)
        : { code: 'capture_reverted', message: 'the relayer did not send the capture' },
  });
}
