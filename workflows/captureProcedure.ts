// A capture: one local activity for the precheck and the simulation, then one
// activity that hands the call to the relayer and follows it to the confirmation depth, so the whole
// capture is the update's workflow task and the one that records its outcome. The relayer speaks
// only when something went wrong (it refused the call, its transaction reverted or was abandoned):
// then the follower is cancelled and the chain says what became of the nonce.
import { log, workflowInfo } from '@temporalio/workflow';
import { followUnlessTroubled } from './followOnchain.js';
import type { CaptureOnchainResult } from '../domain/activityContract.js';
import type { AuthorizationView } from '../domain/authorization.js';
import { localReads } from './activities.js';
import { failureOf } from './failures.js';
import type { Lifecycle } from './lifecycle.js';
import { completePartialCapture, lastErrorFailure, reconcile, settledMeanwhile, type ChainWindow } from './procedures.js';
import type { Relay } from './relayClient.js';

/** A follower is given the authorization's whole window, and then some: past validBefore nothing can land. */
const FOLLOW_MARGIN_MS = 10 * 60_000;

export async function captureInOneActivity(lifecycle: Lifecycle, relay: Relay, window: ChainWindow, amount?: string): Promise<AuthorizationView> {
  lifecycle.send({ type: 'CAPTURE_REQUESTED', ...(amount === undefined ? {} : { amount }) });
  const request = lifecycle.captureRequest();
  const { facts, prepared, fromBlock } = await localReads.prepareCaptureAttempt(request);
  const early = settledMeanwhile(lifecycle, 'captured');
  if (early) return early;
  lifecycle.send({ type: 'PRECHECKED', facts });
  if (!lifecycle.matches('capturing')) {
    // Consumed onchain by someone else: find out by whom, and settle on the true state.
    if (facts.authorizationUsed) await reconcile(lifecycle, window);
    await completePartialCapture(lifecycle, relay);
    if (lifecycle.state === 'captured') return lifecycle.view();
    throw lastErrorFailure(lifecycle);
  }
  if (prepared?.status === 'failed') {
    lifecycle.send({ type: 'CAPTURE_FAILED', failure: prepared.failure });
    throw lastErrorFailure(lifecycle);
  }
  if (prepared?.status === 'consumed') {
    lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain: prepared.onchain });
    await completePartialCapture(lifecycle, relay);
    if (lifecycle.state === 'captured') return lifecycle.view();
    throw lastErrorFailure(lifecycle);
  }

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
  else {
    if ('error' in first) log.warn('following the capture failed for good', { orderId: lifecycle.context.orderId, error: failureOf(first.error).message });
    // Whatever the relayer or the follower says, the chain has the last word: the nonce may be used.
    await reconcile(lifecycle, window).catch(() => undefined);
    if (lifecycle.matches('capturing')) {
      const answer = relay.answer(requestId);
      lifecycle.send({
        type: 'CAPTURE_FAILED',
        failure: answer?.failure
          ? { ...answer.failure, message: answer.transactionHash ? `${answer.failure.message} (${answer.transactionHash})` : answer.failure.message }
          : 'error' in first
            ? failureOf(first.error)
            : { code: 'capture_reverted', message: 'the relayer did not send the capture' },
      });
    }
  }
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
