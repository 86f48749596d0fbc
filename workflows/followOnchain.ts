// A transaction handed to the relayer and followed onchain by one activity (generation 2), raced
// against the relayer's word: it speaks only when it refused the call, or its transaction reverted
// or was abandoned, and then the follower is cancelled. Shared by captures and refunds.
import { type ActivityOptions, CancellationScope, condition, isCancellation, log } from '@temporalio/workflow';
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
      (result) => ({ result }),
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
