// A held payment's escrow call handed to the relayer and followed by one activity, raced against the
// relayer's word (it speaks only when it refused the call, or its transaction reverted or was
// abandoned), as followOnchain.ts does for a token capture. An answer is believed only about this
// hold's own payment: the escrow event must carry its payment hash.
import { type ActivityOptions, ApplicationFailure, CancellationScope, condition, isCancellation, log } from '@temporalio/workflow';
import type { Hex } from 'viem';
import type { EscrowOnchainRequest, EscrowOnchainResult } from '../domain/holds.js';
import { followers } from './activities.js';
import { failureOf } from './failures.js';
import type { Relay } from './relayClient.js';

export type FollowedEscrow = { result: EscrowOnchainResult } | { error: unknown } | { troubled: true };

export async function followEscrowUnlessTroubled(relay: Relay, request: EscrowOnchainRequest, own: Hex, options: ActivityOptions): Promise<FollowedEscrow> {
  const follower = new CancellationScope();
  const following = follower.run(() => followers().escrowOnchain.executeWithOptions(options, [request]));
  const troubled = condition(() => relay.answer(request.requestId)?.failure !== undefined);
  const first: FollowedEscrow = await Promise.race([
    following.then(
      (result) =>
        typeof result?.paymentInfoHash === 'string' && result.paymentInfoHash.toLowerCase() === own.toLowerCase()
          ? { result }
          : { error: foreignAnswer(request) },
      (error: unknown) => ({ error }),
    ),
    troubled.then(() => ({ troubled: true as const })),
  ]);
  if ('troubled' in first) {
    follower.cancel();
    await following.catch((err: unknown) => (isCancellation(err) ? undefined : log.warn('escrow follower ended', { error: failureOf(err).message })));
  }
  return first;
}

function foreignAnswer(request: EscrowOnchainRequest): ApplicationFailure {
  log.warn('an escrow follower answered about another payment: the chain decides', { requestId: request.requestId });
  return ApplicationFailure.create({ type: 'unauthenticated_input', nonRetryable: true, message: 'the follower answered about another payment' });
}
