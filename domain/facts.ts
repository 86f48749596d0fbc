// Facts that activities gather and events carry into the machine. Plain JSON: they are recorded in
// workflow history, so a replay sees exactly what the decision saw.
import type { Hex } from 'viem';
import type { ErrorCode } from './errors.js';

/** The chain as the `pending` (preconfirmed) view shows it just before a capture. */
export interface CapturePrecheckFacts {
  /** Timestamp (unix seconds) of the pending block: the time the capture would be judged by. */
  chainTime: string;
  /** authorizationState(payer, nonce): true once used or canceled. */
  authorizationUsed: boolean;
  payerBalance: string;
  /** The merchant's native balance, and what a capture transaction needs at the current fee. */
  merchantGasBalance: string;
  requiredGas: string;
  paused: boolean;
  payerBlacklisted: boolean;
  merchantBlacklisted: boolean;
}

/** What the token's logs say about a nonce. */
export type OnchainNonceFacts = { status: 'unused' } | OnchainConsumption;

/** The log that consumed a nonce: AuthorizationUsed (`used`) or AuthorizationCanceled (`canceled`). */
export interface OnchainConsumption {
  status: 'used' | 'canceled';
  transactionHash: Hex;
  blockNumber: string;
  blockHash: Hex;
}

export interface SignatureCheck {
  valid: boolean;
  /** Why it was refused, for the caller. */
  reason?: string;
  code?: ErrorCode;
}

export interface CaptureFailure {
  code: ErrorCode;
  message: string;
}

/** The chain as the `pending` view shows it just before a refund is signed and sent. */
export interface RefundPrecheckFacts {
  /** Timestamp (unix seconds) of the pending block. */
  chainTime: string;
  /** A block no attempt signed now can land below, reorgs included (the pending block's number, less a margin). */
  blockNumber?: string;
  /** The refund's own nonce, as the token's logs tell it (used: an earlier attempt landed). */
  onchain: OnchainNonceFacts;
  /** The merchant key's token balance: what it can give back. */
  merchantBalance: string;
  merchantGasBalance: string;
  requiredGas: string;
  paused: boolean;
  merchantBlacklisted: boolean;
  payerBlacklisted: boolean;
}
