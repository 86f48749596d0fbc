// The refunds workflow's message surface: what the API and the typed client send it.
import type { AuthorizationChain } from '../domain/chain.js';
import { defineUpdate } from '@temporalio/workflow';
import type { Address, Hex } from 'viem';
import type { HeldRefund } from '../domain/holds.js';
import type { RefundedAuthorization, RefundRecord } from '../domain/refunds.js';
import type { MemoEventLogState } from './memoEventLog.js';

export interface RefundsWorkflowInput {
  authorizationRunId: string;
  orderId: string;
  payer: Address;
  /** The merchant key that received the capture: it sends every refund. */
  merchant: Address;
  /** What the merchant captured and kept, in minor units: refunds never sum to more. */
  amountCapturedMinor: string;
  /** The capture's transaction: each refund's signature and relay are checked against it. */
  captureTransactionHash?: Hex | null;
  /** When the capture reached its depth (ISO-8601). */
  capturedAt: string;
  /** The end of the refund window (ISO-8601): refunds asked for after it are refused. */
  refundableUntil: string;
  /** The authorization as captured: refund events carry it, its amountRefunded brought up to date. */
  authorization: RefundedAuthorization;
  /** Continue-as-new: what the previous run kept. */
  carried?: { refunds: RefundRecord[]; eventSequence: number; refundableUntil: string; eventLog: MemoEventLogState };
  /**
   * When the API asked for the ledger to start (ISO-8601). A ledger starts only from a fresh request:
   * a start input copied out of history into the same id later (terminated, then started again) would
   * rewind the ledger and sign its refunds' nonces again.
   */
  requestedAt?: string;
  /** Operators' and tests' knob (not on the API): the history length past which the ledger rolls over (default 2,000). */
  historyLimit?: number;
  /** The authorization's network and token (absent: the worker's first network and token). */
  chain?: AuthorizationChain;
  /** A held payment's hold: its refunds go through the escrow's `refund` (workflows/escrowRefundProcedure.ts). */
  hold?: HeldRefund;
}

export interface RefundCommand {
  /** Minor units; null: all that is left. */
  amountMinor: string | null;
  reason: string | null;
  /** The caller's idempotency: the same key is the same refund (a digest, never the key itself). */
  requestKey: string;
  /** A digest of what was asked: the same key with another request is refused. */
  requestFingerprint: string;
}

/**
 * The type of the validator's refusal when a refund with this request key exists already: the
 * caller gets that refund back (in the failure's details), and the workflow's history gets nothing.
 */
export const REFUND_ALREADY_REQUESTED = 'refund_already_requested';

/**
 * Give money back. Accepted only if it fits in what was captured and is not refunded or promised
 * (the validator decides, so a refused refund leaves no trace). Answers at once with the refund as
 * recorded (pending); the refund then runs to its end in the workflow, and the memo follows it.
 */
export const refundUpdate = defineUpdate<RefundRecord, [RefundCommand]>('refund');
