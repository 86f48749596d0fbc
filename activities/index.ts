// The activity factory, in the style of Temporal's samples: plain async functions closed over their
// dependencies. The worker builds the ChainContext once and registers what this returns.
import type { AuthorizationActivities } from '../domain/activityContract.js';
import type { RelayRequest, RelayerActivities } from '../domain/relay.js';
import { createRelayerActivities } from './relayer.js';
import { ApplicationFailure } from '@temporalio/common';
import { asActivityError } from './rpc/rpcErrors.js';
import type { ChainContext } from './chainContext.js';
import { createCancelActivities } from './cancel.js';
import { createPresignedActivity } from './presigned.js';
import { createDraftActivity } from './draft.js';
import { createNonceStateActivity } from './nonceState.js';
import { createCaptureActivities } from './capture.js';
import { createVerifyActivity } from './verify.js';
import { createRefundActivities } from './refund.js';
import { createEventActivities, type EventDependencies } from './events.js';
import type { EventActivities } from '../domain/activityContract.js';
import { draftNonce, type DraftNonceKeys } from './draftNonce.js';
import { createCaptureOnchainActivity } from './captureOnchain.js';
import { createEscrowOnchainActivity } from './escrowOnchain.js';
import { createEscrowRefundFactsActivity } from './escrowRefund.js';
import { createHoldAttemptActivity } from './holdAttempt.js';
import { createCaptureAttemptActivity } from './captureAttempt.js';

export { createChainContext, createNetworkContexts, type ChainConfig, type ChainContext, type ChainPolicy } from './chainContext.js';
export { ChainContexts } from './chainRouting.js';
import { ChainContexts, routedActivities } from './chainRouting.js';

export interface ActivityDependencies {
  /**
   * Delivers a transaction to the merchant's relayer workflow on the request's network (the worker
   * builds it on its Temporal client). The request names its token.
   */
  requestRelay: (request: RelayRequest, ctx: ChainContext) => Promise<void>;
  /** Webhook endpoints and the workflows' events (the worker builds them on its Temporal client). */
  events: EventDependencies;
  /** Tag the nonces of drafts (activities/draftNonce.ts): derived from the payload keys. */
  draftNonceKeys: DraftNonceKeys;
}

/**
 * The activities of every served network and token behind one set of names: each call runs on the
 * chain its workflow named (activities/chainRouting.ts).
 */
export function createActivities(
  contexts: ChainContexts | ChainContext,
  deps: ActivityDependencies,
): AuthorizationActivities & RelayerActivities & EventActivities {
  const served = contexts instanceof ChainContexts ? contexts : new ChainContexts([contexts]);
  return routedActivities(served, (ctx) => createChainActivities(ctx, served, deps));
}

function createChainActivities(
  ctx: ChainContext,
  served: ChainContexts,
  deps: ActivityDependencies,
): AuthorizationActivities & RelayerActivities & EventActivities {
  // Every relay request names its token: the relayer of a network sends for each of its tokens.
  const requestRelay = (request: RelayRequest) =>
    deps.requestRelay(
      { ...request, token: request.token ?? ctx.tokenAddress, network: request.network ?? ctx.network, issuedAt: new Date().toISOString() },
      ctx,
    );
  return classifyingErrors({
    ...createEventActivities(deps.events),
    requestRelay,
    ...createRelayerActivities(ctx, (token) => served.sibling(ctx, token)),
    checkPresignedAuthorization: createPresignedActivity(ctx, deps.draftNonceKeys),
    ...createCancelActivities(ctx),
    draftAuthorization: createDraftActivity(ctx, { randomNonce: () => draftNonce(deps.draftNonceKeys) }),
    verifyAuthorizationSignature: createVerifyActivity(ctx),
    readNonceState: createNonceStateActivity(ctx),
    ...createCaptureActivities(ctx),
    prepareCaptureAttempt: createCaptureAttemptActivity(ctx),
    prepareHoldAttempt: createHoldAttemptActivity(ctx),
    captureOnchain: createCaptureOnchainActivity(ctx, requestRelay),
    escrowOnchain: createEscrowOnchainActivity(ctx, requestRelay),
    escrowRefundFacts: createEscrowRefundFactsActivity(ctx),
    ...createRefundActivities(ctx),
  });
}

/**
 * Every activity's node errors leave in the form Temporal's retry policy understands: transient
 * faults (timeouts, 429, 5xx, "header not found") as plain errors that retry with backoff, invalid
 * params and reverts as non-retryable ApplicationFailures carrying authcap's code.
 */
function classifyingErrors<T extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: T): T {
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [
      name,
      async (...args: never[]) => {
        try {
          return await fn(...args);
        } catch (err) {
          throw err instanceof ApplicationFailure ? err : asActivityError(err);
        }
      },
    ]),
  ) as T;
}
