// The multi-step commands: each gathers facts with activities and lets the machine decide each step.
import { ApplicationFailure } from '@temporalio/workflow';
import type { Hex } from 'viem';
import type { AuthorizationView } from '../domain/authorization.js';
import type { ErrorCode } from '../domain/errors.js';
import { reads, waits } from './activities.js';
import type { Relay } from './relayClient.js';
import type { Lifecycle } from './lifecycle.js';

export function failure(code: ErrorCode, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: code, message, nonRetryable: true });
}

function lastErrorFailure(lifecycle: Lifecycle): ApplicationFailure {
  const last = lifecycle.context.lastError;
  return last ? failure(last.code, last.message) : failure('invalid_state', `the authorization is ${lifecycle.state}`);
}

/**
 * While a command waits on an activity, the chain may settle the authorization another way (the
 * watcher or a periodic check saw the nonce consumed). Then the command reports that truth: the
 * capture it asked for happened (by someone) or the authorization is final in another state.
 */
function settledMeanwhile(lifecycle: Lifecycle, wanted: 'captured' | 'canceled'): AuthorizationView | undefined {
  if (!lifecycle.isFinal) return undefined;
  if (lifecycle.state === wanted) return lifecycle.view();
  throw failure('invalid_state', `the authorization became ${lifecycle.state} meanwhile`);
}

export async function submitSignature(lifecycle: Lifecycle, signature: Hex): Promise<AuthorizationView> {
  lifecycle.send({ type: 'SIGNATURE_SUBMITTED' });
  const { domain, authorization, primaryType } = lifecycle.context;
  const check = await reads.verifyAuthorizationSignature({ domain: domain!, authorization: authorization!, primaryType, signature });
  lifecycle.send({ type: 'SIGNATURE_CHECKED', signature, check });
  if (lifecycle.state === 'stored') return lifecycle.view();
  if (!check.valid) throw failure(check.code ?? 'invalid_signature', check.reason ?? 'invalid signature');
  throw failure('invalid_state', `the authorization became ${lifecycle.state} while the signature was checked`);
}

export async function capture(lifecycle: Lifecycle, relay: Relay): Promise<AuthorizationView> {
  lifecycle.send({ type: 'CAPTURE_REQUESTED' });
  const request = lifecycle.captureRequest();
  const facts = await reads.precheckCapture(request);
  const early = settledMeanwhile(lifecycle, 'captured');
  if (early) return early;
  lifecycle.send({ type: 'PRECHECKED', facts });
  if (!lifecycle.matches('capturing')) {
    // Consumed onchain by someone else: find out by whom, and settle on the true state.
    if (facts.authorizationUsed) await reconcile(lifecycle);
    if (lifecycle.state === 'captured') return lifecycle.view();
    throw lastErrorFailure(lifecycle);
  }

  const prepared = await reads.prepareCapture(request);
  if (prepared.status === 'failed') {
    lifecycle.send({ type: 'CAPTURE_FAILED', failure: prepared.failure });
    throw lastErrorFailure(lifecycle);
  }
  if (prepared.status === 'consumed') {
    lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain: prepared.onchain });
    if (lifecycle.state === 'captured') return lifecycle.view();
    throw failure('nonce_already_used', `the nonce was ${prepared.onchain.status} onchain in ${prepared.onchain.transactionHash}`);
  }
  const { from, nonce } = request.authorization;
  const relayed = await relay(`capture:${from}:${nonce}`, prepared.transaction, { authorizer: from, nonce });
  if (!relayed.transactionHash) {
    lifecycle.send({ type: 'CAPTURE_FAILED', failure: relayed.failure ?? { code: 'capture_reverted', message: 'the relayer did not send the capture' } });
    throw lastErrorFailure(lifecycle);
  }
  // The hash is in history before we wait on it: after a crash the workflow follows this transaction.
  lifecycle.send({ type: 'CAPTURE_SUBMITTED', transactionHash: relayed.transactionHash });

  for (;;) {
    // Inclusion is judged by the AuthorizationUsed log, so a fee-bumped replacement counts too.
    const included = await waits.awaitCaptureInclusion({ ...request, transactionHash: relayed.transactionHash });
    if (included.status === 'failed') {
      lifecycle.send({ type: 'CAPTURE_FAILED', failure: included.failure });
      throw lastErrorFailure(lifecycle);
    }
    lifecycle.send({ type: 'CAPTURE_PRECONFIRMED', blockNumber: included.blockNumber, blockHash: included.blockHash });
    const confirmed = await waits.awaitCaptureConfirmation({ ...request, transactionHash: included.transactionHash, blockHash: included.blockHash });
    if (confirmed.status === 'confirmed') {
      lifecycle.send({ type: 'CAPTURE_CONFIRMED', ...confirmed });
      return lifecycle.view();
    }
    lifecycle.send({ type: 'CAPTURE_REORGED' });
  }
}

export async function cancel(lifecycle: Lifecycle, relay: Relay, signature: Hex): Promise<AuthorizationView> {
  lifecycle.send({ type: 'CANCEL_REQUESTED' });
  const { domain, authorization } = lifecycle.context;
  const request = { authorizer: authorization!.from, nonce: authorization!.nonce, signature };
  const check = await reads.verifyCancelSignature({ ...request, domain: domain! });
  const early = settledMeanwhile(lifecycle, 'canceled');
  if (early) return early;
  lifecycle.send({ type: 'CANCEL_SIGNATURE_CHECKED', check });
  if (!lifecycle.matches('canceling')) {
    if (!check.valid) throw failure(check.code ?? 'invalid_signature', check.reason ?? 'invalid cancellation signature');
    throw failure('invalid_state', `the authorization became ${lifecycle.state} while the cancellation was checked`);
  }
  const prepared = await reads.prepareCancel(request);
  if (prepared.status === 'consumed') {
    lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain: prepared.onchain });
    return lifecycle.view();
  }
  if (prepared.status === 'failed') {
    lifecycle.send({ type: 'CANCEL_FAILED', failure: prepared.failure });
    throw lastErrorFailure(lifecycle);
  }
  const relayed = await relay(`cancel:${request.authorizer}:${request.nonce}`, prepared.transaction, request);
  if (!relayed.transactionHash) {
    lifecycle.send({ type: 'CANCEL_FAILED', failure: relayed.failure ?? { code: 'capture_reverted', message: 'the relayer did not send the cancellation' } });
    throw lastErrorFailure(lifecycle);
  }
  lifecycle.send({ type: 'CANCEL_SUBMITTED', transactionHash: relayed.transactionHash });
  const confirmed = await waits.awaitCancelConfirmation({ ...request, transactionHash: relayed.transactionHash });
  if (confirmed.status === 'failed') {
    lifecycle.send({ type: 'CANCEL_FAILED', failure: confirmed.failure });
    throw lastErrorFailure(lifecycle);
  }
  lifecycle.send({ type: 'CANCEL_CONFIRMED', transactionHash: confirmed.transactionHash, blockNumber: confirmed.blockNumber });
  return lifecycle.view();
}

/** Reads the nonce's fate from the chain; moves to captured/canceled if someone consumed it. */
export async function reconcile(lifecycle: Lifecycle): Promise<void> {
  const authorization = lifecycle.context.authorization;
  if (!authorization) return;
  const onchain = await reads.readNonceState({ authorizer: authorization.from, nonce: authorization.nonce });
  if (onchain.status !== 'unused' && lifecycle.can({ type: 'NONCE_CONSUMED_ONCHAIN', onchain })) {
    lifecycle.send({ type: 'NONCE_CONSUMED_ONCHAIN', onchain });
  }
}

/** At validBefore: let an in-flight command finish, then ask the chain what really happened. */
export async function expireAtDeadline(lifecycle: Lifecycle, settled: () => Promise<void>): Promise<void> {
  await settled();
  if (lifecycle.isFinal) return;
  const authorization = lifecycle.context.authorization;
  const onchain = authorization
    ? await reads.readNonceState({ authorizer: authorization.from, nonce: authorization.nonce })
    : ({ status: 'unused' } as const);
  lifecycle.send({ type: 'DEADLINE_REACHED', onchain });
}
