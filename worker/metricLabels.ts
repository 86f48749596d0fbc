// The label values the worker's metrics start with at zero (worker/telemetry.ts), in a module of
// their own so tests can read them without registering the worker's metrics in their process.
import type { HeadFeedState } from '../activities/rpc/headFeed.js';

/**
 * The codes a capture attempt fails with (workflows/precheckFailure.ts, the relayer, the capture's
 * transaction, an unreachable node): at zero from the start, so increase() sees the first failure.
 * A code not listed still counts; its series starts at its first failure.
 */
export const CAPTURE_FAILURE_CODES = [
  'insufficient_balance',
  'insufficient_merchant_gas',
  'token_policy_blocked',
  'authorization_not_yet_valid',
  'authorization_expired',
  'nonce_already_used',
  'capture_reverted',
  'relay_refused',
  'chain_unavailable',
  'internal_error',
] as const;

/** The codes a refund fails with (workflows/refundMachine.ts), at zero from the start for the same reason. */
export const REFUND_FAILURE_CODES = [
  'insufficient_merchant_balance',
  'insufficient_merchant_gas',
  'token_policy_blocked',
  'refund_reverted',
  'refund_sequence_taken',
  'chain_unavailable',
  'internal_error',
] as const;

/** Every state a head feed reports (activities/rpc/headFeed.ts): each network has one series per state. */
export const HEAD_FEED_STATES = Object.keys({ live: 1, connecting: 1, failing: 1, silent: 1, off: 1 } satisfies Record<HeadFeedState, 1>) as HeadFeedState[];
