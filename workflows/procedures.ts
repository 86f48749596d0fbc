// The multi-step commands: each gathers facts with activities and lets the machine decide each step.
// Whatever an activity does, a command ends with the authorization resting or final (`asCommand`),
// and once a capture is on the wire only the chain ends it (workflows/captureProcedure.ts).
import { ApplicationFailure, condition, log, sleep, workflowInfo } from '@temporalio/workflow';
import { failure, failureOf } from './failures.js';
import type { Hex } from 'viem';
import type { AuthorizationView } from '../domain/authorization.js';
import { isErrorCode } from '../domain/errors.js';
import { localReads, waits } from './activities.js';
import type { Relay } from './relayClient.js';
import type { Lifecycle } from './lifecycle.js';
import { PARTIAL_CAPTURE_REASON } from '../domain/refunds.js';
import { keptAmount } from './machine.js';

export { failure, failureOf } from './failures.js';

export function lastErrorFailure(lifecycle: Lifecycle): ApplicationFailure {
  const last = lifecycle.context.lastError;
  return last ? failure(last.code, last.message) : failure('invalid_state', `the authorization is ${lifecycle.state}`);
}

/**
 * Runs a command. If an activity fails for good (a revert, an invalid-params answer, a retry budget
 * spent), the machine gets COMMAND_FAILED and rests again, so void, reconciliation and the deadline
 * keep working; the caller gets the reason.
 */
export async function asCommand<T>(lifecycle: Lifecycle, command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } catch (err) {
    if (err instanceof ApplicationFailure && isErrorCode(err.type) && lifecycle.isResting) throw err;
    const why = failureOf(err);
    if (!lifecycle.isResting && lifecycle.can({ type: 'COMMAND_FAILED', failure: why })) {
      lifecycle.send({ type: 'COMMAND_FAILED', failure: why });
    }
    log.warn('command failed', { orderId: lifecycle.context.orderId, code: why.code, state: lifecycle.describeState() });
    throw failure(why.code, why.message);
  }
}

/**
 * While a command waits on an activity, the chain may settle the authorization another way (the
 * watcher or a periodic check saw the nonce consumed). Then the command reports that truth: the
 * capture it asked for happened (by someone) or the authorization is final in another state.
 */
export function settledMeanwhile(lifecycle: Lifecycle, wanted: 'captured' | 'canceled'): AuthorizationView | undefined {
  if (!lifecycle.isFinal) return undefined;
  if (lifecycle.state === wanted) return lifecycle.view();
  throw failure('invalid_state', `the authorization became ${lifecycle.state} meanwhile`);
}

export async function submitSignature(lifecycle: Lifecycle, signature: Hex): Promise<AuthorizationView> {
  lifecycle.send({ type: 'SIGNATURE_SUBMITTED' });
  const { domain, authorization, primaryType } = lifecycle.context;
  const check = await localReads.verifyAuthorizationSignature({ domain: domain!, authorization: authorization!, primaryType, signature });
  lifecycle.send({ type: 'SIGNATURE_CHECKED', signature, check });
  if (lifecycle.state === 'stored') return lifecycle.view();
  if (!check.valid) throw failure(check.code ?? 'invalid_signature', check.reason ?? 'invalid signature');
  throw failure('invalid_state', `the authorization became ${lifecycle.state} while the signature was checked`);
}

export interface ChainWindow {
  /** No log of this authorization's nonce is older than this block. */
  fromBlock?: string;
}

/** Longest pause between rounds of a release that keeps failing (the token paused for days, say). */
const MAX_RELEASE_PAUSE_MS = 30 * 60_000;

/**
 * A partial capture moved the whole signed value: the difference goes back to the payer before the
 * capture counts as done. It is a refund like any other (same machine, same exactly-once nonce), but
 * it cannot be given up: until it succeeds the payer is over-charged, so it starts over after a pause
 * whatever failed. Its record is in the machine's context, so a crash resumes it where it was.
 */
export async function completePartialCapture(lifecycle: Lifecycle, relay: Relay): Promise<void> {
  if (!lifecycle.matches({ capturing: 'releasing' })) return;
  // One driver at a time (the capture command, or the main loop when the chain settled it): the other waits.
  if (lifecycle.releaseDriven) return void (await condition(() => !lifecycle.matches({ capturing: 'releasing' })));
  lifecycle.releaseDriven = true;
  try {
    await releaseDifference(lifecycle, relay);
  } finally {
    lifecycle.releaseDriven = false;
  }
}

async function releaseDifference(lifecycle: Lifecycle, relay: Relay): Promise<void> {
  // Loaded by the few authorizations that need it: the sandbox evaluates every module each workflow imports.
  const [{ openRefund }, { retryRefund, runRefund }] = await Promise.all([
    import(/* webpackMode: "eager" */ './refundMachine.js'),
    import(/* webpackMode: "eager" */ './refundProcedure.js'),
  ]);
  const { context } = lifecycle;
  const authorization = context.authorization!;
  if (!context.release) {
    const release = openRefund({
      sequence: 0,
      ...(context.chain ? { chain: context.chain } : {}),
      authorizationRunId: workflowInfo().firstExecutionRunId,
      orderId: context.orderId,
      payer: authorization.from,
      merchant: authorization.to,
      captureTransactionHash: context.capture?.transactionHash ?? null,
      amountMinor: (BigInt(context.value) - BigInt(keptAmount(context))).toString(),
      reason: PARTIAL_CAPTURE_REASON,
      createdAt: new Date().toISOString(),
      requestKey: null,
      requestFingerprint: null,
    });
    lifecycle.send({ type: 'RELEASE_UPDATED', release });
  }
  for (let round = 1; lifecycle.matches({ capturing: 'releasing' }); round += 1) {
    const outcome = await runRefund(lifecycle.context.release!, {
      relay,
      // A release cannot give up: one that failed this round is pending again (its reason in lastError),
      // never `failed`, which callers read as final.
      onChange: (release) => lifecycle.send({ type: 'RELEASE_UPDATED', release: release.stage === 'failed' ? retryRefund(release) : release }),
    });
    if (outcome.stage === 'succeeded') return;
    log.warn('the partial capture release failed; starting it over', { orderId: context.orderId, round, code: outcome.failure?.code });
    await sleep(Math.min(10_000 * 2 ** (round - 1), MAX_RELEASE_PAUSE_MS));
    lifecycle.send({ type: 'RELEASE_UPDATED', release: retryRefund(outcome) });
  }
}

export async function cancel(lifecycle: Lifecycle, relay: Relay, signature: Hex): Promise<AuthorizationView> {
  lifecycle.send({ type: 'CANCEL_REQUESTED' });
  const { domain, authorization } = lifecycle.context;
  const request = { authorizer: authorization!.from, nonce: authorization!.nonce, signature };
  const check = await localReads.verifyCancelSignature({ ...request, domain: domain! });
  const early = settledMeanwhile(lifecycle, 'canceled');
  if (early) return early;
  lifecycle.send({ type: 'CANCEL_SIGNATURE_CHECKED', check });
  if (!lifecycle.matches('canceling')) {
    if (!check.valid) throw failure(check.code ?? 'invalid_signature', check.reason ?? 'invalid cancellation signature');
    throw failure('invalid_state', `the authorization became ${lifecycle.state} while the cancellation was checked`);
  }
  const prepared = await localReads.prepareCancel(request);
  if (prepared.status === 'consumed') {
    lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain: prepared.onchain });
    return lifecycle.view();
  }
  if (prepared.status === 'failed') {
    lifecycle.send({ type: 'CANCEL_FAILED', failure: prepared.failure });
    throw lastErrorFailure(lifecycle);
  }
  const attempt = lifecycle.cancelAttempts;
  const relayed = await relay(`cancel:${request.authorizer}:${request.nonce}:${attempt}`, { kind: 'cancel', ...request }, authorization!.to);
  if (!relayed.transactionHash) {
    lifecycle.send({ type: 'CANCEL_FAILED', failure: relayed.failure ?? { code: 'capture_reverted', message: 'the relayer did not send the cancellation' } });
    throw lastErrorFailure(lifecycle);
  }
  lifecycle.send({ type: 'CANCEL_SUBMITTED', transactionHash: relayed.transactionHash });
  const confirmed = await waits.awaitCancelConfirmation({ ...request, transactionHash: relayed.transactionHash });
  if (!lifecycle.matches('canceling')) return settledMeanwhile(lifecycle, 'canceled') ?? lifecycle.view();
  if (confirmed.status === 'failed') {
    lifecycle.send({ type: 'CANCEL_FAILED', failure: confirmed.failure });
    throw lastErrorFailure(lifecycle);
  }
  lifecycle.send({ type: 'CANCEL_CONFIRMED', transactionHash: confirmed.transactionHash, blockNumber: confirmed.blockNumber });
  return lifecycle.view();
}

/** Reads the nonce's fate from the chain; moves to captured/canceled if someone consumed it. */
export async function reconcile(lifecycle: Lifecycle, window: ChainWindow): Promise<void> {
  const authorization = lifecycle.context.authorization;
  if (!authorization) return;
  const onchain = await localReads.readNonceState({ authorizer: authorization.from, nonce: authorization.nonce, fromBlock: window.fromBlock });
  if (onchain.status !== 'unused' && lifecycle.can({ type: 'NONCE_CONSUMED_ONCHAIN', onchain })) {
    lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain });
  }
}

/** At validBefore: let an in-flight command finish, then ask the chain what really happened. */
export async function expireAtDeadline(lifecycle: Lifecycle, settled: () => Promise<void>, window: ChainWindow): Promise<void> {
  await settled();
  if (lifecycle.isFinal) return;
  const authorization = lifecycle.context.authorization;
  const onchain = authorization
    ? await localReads.readNonceState({ authorizer: authorization.from, nonce: authorization.nonce, fromBlock: window.fromBlock })
    : ({ status: 'unused' } as const);
  lifecycle.send({ type: 'DEADLINE_REACHED', onchain });
}
