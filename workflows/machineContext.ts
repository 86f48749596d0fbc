// What the authorization machine (workflows/machine.ts) works on: its context (the authorization
// as the workflow knows it), its input, and the events that carry facts into it, with the pure
// helpers its actions share. Types and arithmetic only: the decisions are the machine's.
import type { Address, Hex } from 'viem';
import { decimalsOf, formatAmount } from '../domain/amount.js';
import type { CancellationRecord, CaptureRecord, VoidRecord } from '../domain/authorization.js';
import type { AuthorizationChain } from '../domain/chain.js';
import type { AuthorizationMessage, AuthorizationPrimaryType, TokenDomain } from '../domain/eip3009.js';
import type { ErrorCode, RecordedError } from '../domain/errors.js';
import type { CapturePrecheckFacts, CaptureFailure, OnchainConsumption, OnchainNonceFacts, SignatureCheck } from '../domain/facts.js';
import type { RefundRecord } from '../domain/refunds.js';
import type { HoldCapture, HoldRecord } from '../domain/holds.js';
import type { WirePaymentInfo } from '../domain/escrowCall.js';

export interface AuthorizationContext {
  orderId: string;
  payer: Address;
  value: string;
  primaryType: AuthorizationPrimaryType;
  domain: TokenDomain | null;
  authorization: AuthorizationMessage | null;
  signature: Hex | null;
  capture: CaptureRecord | null;
  cancellation: CancellationRecord | null;
  void: VoidRecord | null;
  lastError: RecordedError | null;
  /**
   * What the capture in flight (or the last one asked for) keeps, in minor units: less than `value`
   * for a partial capture, whose difference goes back to the payer. Null: all of it.
   */
  captureAmount: string | null;
  /** A partial capture's release: the refund of what was captured but not kept (sequence 0). */
  release: RefundRecord | null;
  /** The network and token (absent: started without one, on the worker's first network and token). */
  chain?: AuthorizationChain;
  /** Its funds held in escrow (docs/holds.md): the terms, what is held, each capture. Absent: a plain authorization. */
  hold?: HoldRecord;
}

export interface MachineInput {
  orderId: string;
  payer: Address;
  value: string;
  primaryType: AuthorizationPrimaryType;
  chain?: AuthorizationChain;
}

/** Every event carries `at`, the workflow time it happened (ISO-8601), so the machine stays pure. */
export type AuthorizationEvent =
  /** `hold`: the escrow terms the authorization is of (a hold's draft, or a pre-signed hold). */
  | { type: 'DRAFTED'; at: string; domain: TokenDomain; authorization: AuthorizationMessage; hold?: { terms: WirePaymentInfo; paymentInfoHash: Hex } }
  | {
      type: 'PRESIGNED_CHECKED';
      at: string;
      domain: TokenDomain;
      authorization: AuthorizationMessage;
      signature: Hex;
      check: SignatureCheck;
      hold?: { terms: WirePaymentInfo; paymentInfoHash: Hex };
    }
  | { type: 'SIGNATURE_SUBMITTED'; at: string }
  | { type: 'SIGNATURE_CHECKED'; at: string; signature: Hex; check: SignatureCheck }
  /** `amount`: what to keep, in minor units (a partial capture); absent: all of it. */
  | { type: 'CAPTURE_REQUESTED'; at: string; amount?: string }
  | { type: 'PRECHECKED'; at: string; facts: CapturePrecheckFacts }
  | { type: 'CAPTURE_SUBMITTED'; at: string; transactionHash: Hex }
  | { type: 'CAPTURE_PRECONFIRMED'; at: string; blockNumber: string; blockHash: Hex }
  | { type: 'CAPTURE_CONFIRMED'; at: string; transactionHash: Hex; blockNumber: string; blockHash: Hex }
  | { type: 'CAPTURE_REORGED'; at: string }
  | { type: 'CAPTURE_FAILED'; at: string; failure: CaptureFailure }
  | { type: 'CANCEL_REQUESTED'; at: string }
  | { type: 'CANCEL_SIGNATURE_CHECKED'; at: string; check: SignatureCheck }
  | { type: 'CANCEL_SUBMITTED'; at: string; transactionHash: Hex }
  | { type: 'CANCEL_CONFIRMED'; at: string; transactionHash: Hex; blockNumber: string }
  | { type: 'CANCEL_FAILED'; at: string; failure: CaptureFailure }
  | { type: 'VOID'; at: string; reason: string; by: string }
  | { type: 'DEADLINE_REACHED'; at: string; onchain: OnchainNonceFacts }
  | { type: 'NONCE_CONSUMED_ONCHAIN'; at: string; onchain: OnchainNonceFacts }
  /** An activity of the command in flight failed for good: the command ends, the authorization rests. */
  | { type: 'COMMAND_FAILED'; at: string; failure: CaptureFailure }
  /** A partial capture's release moved on (the refund machine's record); once it succeeded, the capture is complete. */
  | { type: 'RELEASE_UPDATED'; at: string; release: RefundRecord }
  /** A hold's authorize was sent (its transaction). */
  | { type: 'HOLD_SUBMITTED'; at: string; transactionHash: Hex }
  /** The escrow holds the funds, at depth: what the PaymentAuthorized event says. */
  | { type: 'HOLD_CONFIRMED'; at: string; transactionHash: Hex; blockNumber: string; amountMinor: string }
  /** The authorize failed for good (reverted, refused): nothing is held. */
  | { type: 'HOLD_FAILED'; at: string; failure: CaptureFailure }
  /** A capture of a held payment, validated (workflows/holdLedger.ts): it waits its turn. */
  | { type: 'PART_REQUESTED'; at: string; capture: HoldCapture }
  | { type: 'PART_SUBMITTED'; at: string; sequence: number; transactionHash: Hex }
  /** The part's PaymentCaptured is at depth. */
  | { type: 'PART_SUCCEEDED'; at: string; sequence: number; transactionHash: Hex; blockNumber: string }
  /** The part moved nothing (refused, reverted): its amount is capturable again. */
  | { type: 'PART_FAILED'; at: string; sequence: number; failure: CaptureFailure }
  /** What was left went back to the payer: authcap's void (PaymentVoided) or the payer's reclaim (PaymentReclaimed), at depth. */
  | { type: 'HOLD_RELEASED'; at: string; kind: 'void' | 'reclaim'; amountMinor: string; transactionHash: Hex | null };

export type EventOf<T extends AuthorizationEvent['type']> = Extract<AuthorizationEvent, { type: T }>;

/** A hold as it starts: its terms, nothing held yet. */
export function newHold({ terms, paymentInfoHash }: { terms: WirePaymentInfo; paymentInfoHash: Hex }): HoldRecord {
  return { terms, paymentInfoHash, heldMinor: '0', authorizeTransactionHash: null, captures: [], release: null };
}

export function recorded(code: ErrorCode, message: string, at: string): RecordedError {
  return { code, message, at };
}

export function onchainFacts(event: AuthorizationEvent): OnchainNonceFacts | undefined {
  return event.type === 'DEADLINE_REACHED' || event.type === 'NONCE_CONSUMED_ONCHAIN' ? event.onchain : undefined;
}

/** The capture the chain shows: ours (times kept) when the log is our transaction's, else someone else's. */
export function onchainCapture(context: AuthorizationContext, event: AuthorizationEvent, keptMinor: string): CaptureRecord {
  const facts = onchainFacts(event) as OnchainConsumption;
  const ours = context.capture?.transactionHash === facts.transactionHash;
  return {
    transactionHash: facts.transactionHash,
    blockNumber: facts.blockNumber,
    blockHash: facts.blockHash,
    submittedAt: ours ? (context.capture?.submittedAt ?? null) : null,
    preconfirmedAt: ours ? (context.capture?.preconfirmedAt ?? event.at) : event.at,
    confirmedAt: event.at,
    by: ours ? 'authcap' : 'onchain',
    amount: formatAmount(BigInt(keptMinor), decimalsOf(context.chain)),
  };
}

/** What the merchant keeps, in minor units: the capture's amount when one was asked for, else all. */
export function keptAmount(context: Pick<AuthorizationContext, 'value' | 'captureAmount'>): string {
  return context.captureAmount ?? context.value;
}

export function isPartial(context: Pick<AuthorizationContext, 'value' | 'captureAmount'>): boolean {
  return context.captureAmount !== null && BigInt(context.captureAmount) < BigInt(context.value);
}
