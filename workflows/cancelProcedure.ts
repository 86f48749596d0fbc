// A payer's cancellation: their CancelAuthorization signature checked, simulated, relayed from the
// merchant key, and followed to its log at the confirmation depth. The machine decides each step.
import type { Hex } from 'viem';
import type { AuthorizationView } from '../domain/authorization.js';
import { localReads, waits } from './activities.js';
import { failure } from './failures.js';
import type { Lifecycle } from './lifecycle.js';
import { lastErrorFailure, settledMeanwhile } from './procedures.js';
import type { Relay } from './relayClient.js';

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
