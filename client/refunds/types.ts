// What the refund actions take and answer with (the refund itself is domain/refunds.ts).
import type { Refund } from '../../domain/refunds.js';

export interface RefundRequest {
  /** Decimal token amount, e.g. "3.00"; absent: all that is left of the capture. */
  amount?: string | number;
  /** Why, for the merchant's own records (at most 500 characters). */
  reason?: string;
}

export interface RefundOptions {
  /** How long to wait for the refund to be final before answering with it pending (default 15 s). */
  waitMs?: number;
  /**
   * The same key is the same refund: a retry (after a timeout, a crash) gets it back instead of a
   * second one. The HTTP API passes the caller's Idempotency-Key here. Default: a fresh one.
   */
  idempotencyKey?: string;
}

export interface RefundOutcome {
  refund: Refund;
  /** False when it was still pending after the wait: read it again with `refunds.get`. */
  settled: boolean;
}
