// A held payment as the authorization workflow keeps it: the escrow's terms, what was authorized into
// escrow, each capture (a part, exactly once), and what went back to the payer. JSON-safe (no bigint):
// it crosses Temporal payloads, the memo and the HTTP API unchanged.
import type { Hex } from 'viem';
import type { RecordedError } from './errors.js';
import type { EscrowCall, WirePaymentInfo } from './escrowCall.js';
import type { RelayRequest } from './relay.js';

/** The most captures one hold takes (any state): nobody can grow one authorization's cost without bound. */
export const MAX_CAPTURES_PER_HOLD = 50;

/**
 * Where a part is: `pending` (asked for, waiting its turn: parts go to the chain one at a time, each
 * expecting what the one before left), `submitted` (sent; waiting for its block at depth), or done.
 */
export const holdCaptureStages = ['pending', 'submitted', 'succeeded', 'failed'] as const;
export type HoldCaptureStage = (typeof holdCaptureStages)[number];

export interface HoldCapture {
  /** 1 on, in the order asked. */
  sequence: number;
  amountMinor: string;
  /** The last capture: what is left goes back to the payer once it succeeded. */
  final: boolean;
  /** The caller's Idempotency-Key and what it asked with: the same key again is this capture. */
  requestKey: string;
  requestFingerprint: string;
  stage: HoldCaptureStage;
  transactionHash: Hex | null;
  blockNumber: string | null;
  failure: RecordedError | null;
  requestedAt: string;
  succeededAt: string | null;
}

/** What went back to the payer of what was held: authcap's void, or the payer's own reclaim after the capture window. */
export interface HoldRelease {
  kind: 'void' | 'reclaim';
  amountMinor: string;
  transactionHash: Hex | null;
  at: string;
}

export interface HoldRecord {
  terms: WirePaymentInfo;
  /** The escrow's id of the payment (getHash: the terms, the chain, the escrow): its events carry it. */
  paymentInfoHash: Hex;
  /** What the escrow holds for this authorization (0 until the authorize is at depth). */
  heldMinor: string;
  authorizeTransactionHash: Hex | null;
  captures: HoldCapture[];
  release: HoldRelease | null;
}

export function capturedMinor(hold: Pick<HoldRecord, 'captures'>): bigint {
  return hold.captures.filter((c) => c.stage === 'succeeded').reduce((sum, c) => sum + BigInt(c.amountMinor), 0n);
}

/** What the escrow should say is capturable now: held, less what captures moved and what went back. */
export function capturableOnchainMinor(hold: HoldRecord): bigint {
  return BigInt(hold.heldMinor) - capturedMinor(hold) - BigInt(hold.release?.amountMinor ?? '0');
}

/** What a new capture may still take: what is capturable, less the parts asked for and not yet done. */
export function capturableMinor(hold: HoldRecord): bigint {
  if (hold.release) return 0n;
  const open = hold.captures.filter((c) => c.stage === 'pending' || c.stage === 'submitted').reduce((sum, c) => sum + BigInt(c.amountMinor), 0n);
  return capturableOnchainMinor(hold) - open;
}

// --- The escrow follower's contract (activities/escrowOnchain.ts) -----------------------------

/** The escrow's events of a hold; `Approval` is the token's, of the merchant key's approval of the refund collector. */
export type EscrowEventName = 'PaymentAuthorized' | 'PaymentCaptured' | 'PaymentVoided' | 'PaymentReclaimed' | 'PaymentRefunded' | 'Approval';

export interface EscrowOnchainRequest {
  requestId: string;
  replyTo: RelayRequest['replyTo'];
  call: EscrowCall;
  /** Where to look from (the workflow read it before deciding): the event cannot be older. */
  fromBlock?: string;
  /** Events of this hold the workflow already counted (their transactions): not this call's. */
  counted: Hex[];
  /** Only look for the event (the call went out before, and the chain shows it landed): nothing is sent. */
  followOnly?: boolean;
}

export interface EscrowOnchainResult {
  /** The payment the event is of: the workflow believes it only for its own hold's. */
  paymentInfoHash: Hex;
  event: EscrowEventName;
  amountMinor: string;
  transactionHash: Hex;
  blockNumber: string;
  blockHash: Hex;
  /** Who sent it: authcap's merchant key, or someone else (only the payer can reclaim). */
  by: 'authcap' | 'onchain';
  confirmedAt: string;
}

// --- Refunds of a held payment (activities/escrowRefund.ts, workflows/escrowRefundProcedure.ts) ---

/** The hold a refund gives back from: its terms (the escrow's refund names them) and its payment hash. */
export interface HeldRefund {
  paymentInfo: WirePaymentInfo;
  paymentInfoHash: Hex;
}

export interface EscrowRefundFactsRequest {
  paymentInfo: WirePaymentInfo;
}

/** The pending view a refund through the escrow is decided on (amounts in minor units). */
export interface EscrowRefundFacts {
  /** What the escrow still lets the operator refund of this hold (captured less refunded). */
  refundableMinor: string;
  /** What the escrow still holds capturable of this hold. */
  capturableMinor: string;
  merchantBalance: string;
  /** The merchant key's allowance to the network's refund collector. */
  allowance: string;
  paused: boolean;
  merchantBlacklisted: boolean;
  payerBlacklisted: boolean;
  blockNumber: string;
  blockTimestamp: string;
}
