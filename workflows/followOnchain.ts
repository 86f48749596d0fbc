// A transaction handed to the relayer and followed onchain by one activity, raced
// against the relayer's word: it speaks only when it refused the call, or its transaction reverted
// or was abandoned, and then the follower is cancelled. Shared by captures and refunds.
import { type ActivityOptions, ApplicationFailure, CancellationScope, condition, isCancellation, log } from '@temporalio/workflow';
import type { CaptureOnchainRequest, CaptureOnchainResult } from '../domain/activityContract.js';
import { followers } from './activities.js';
import { failureOf } from './failures.js';
import type { Relay } from './relayClient.js';

export type Followed = { result: CaptureOnchainResult } | { error: unknown } | { troubled: true };

export async function followUnlessTroubled(relay: Relay, request: CaptureOnchainRequest, options: ActivityOptions): Promise<Followed> {
  const follower = new CancellationScope();
  const following = follower.run(() => followers().captureOnchain.executeWithOptions(options, [request]));
  const troubled = condition(() => relay.answer(request.requestId)?.failure !== undefined);
  const first: Followed = await Promise.race([
    following.then(
      (result) => (aboutOwnNonce(request, result) ? { result } : { error: foreignAnswer(request, result) }),
      (error: unknown) => ({ error }),
    ),
    troubled.then(() => ({ troubled: true as const })),
  ]);
  if ('troubled' in first) {
    follower.cancel();
    await following.catch((err: unknown) => (isCancellation(err) ? undefined : log.warn('follower ended', { error: failureOf(err).message })));
  }
  return first;
}

/**
 * An answer is believed only about this request's own authorizer and nonce: anything else (its own
 * input sent back as its result, say, or an answer about another payment) is not a follower's answer.
 */
function aboutOwnNonce(request: CaptureOnchainRequest, result: CaptureOnchainResult): boolean {
  const { from, nonce } = request.call.authorization;
  const known = ['confirmed', 'consumed', 'expired'].includes((result as { status?: unknown })?.status as string);
  if (typeof result?.authorizer !== 'string' || typeof result.nonce !== 'string') return false;
  return known && result.authorizer.toLowerCase() === from.toLowerCase() && result.nonce.toLowerCase() === nonce.toLowerCase();
}

function foreignAnswer(request: CaptureOnchainRequest, result: CaptureOnchainResult): ApplicationFailure {
  log.warn('a follower answered about another nonce: the chain decides', { requestId: request.requestId, nonce: result.nonce });
  return ApplicationFailure.create({ type: 'unauthenticated_input', nonRetryable: true, message: 'the follower answered about another nonce' });
}
