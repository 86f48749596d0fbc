// What capture, cancel and refund workflows ask of the merchant's relayer, and what it answers.
// The relayer is no signing service: a request names one of the token's EIP-3009 calls and its
// typed arguments, and the relayer builds the calldata itself, for the configured token only, after
// checking the call against what it concerns (activities/relayCalls.ts).
import type { Address, Hex } from 'viem';
import type { AuthorizationMessage, AuthorizationPrimaryType } from './eip3009.js';
import type { CaptureFailure } from './facts.js';
import type { EscrowCall } from './escrowCall.js';

/** The payer's authorization, captured by the merchant key it names as recipient. */
export interface CaptureCall {
  kind: 'capture';
  primaryType: AuthorizationPrimaryType;
  authorization: AuthorizationMessage;
  signature: Hex;
}

/** The payer's CancelAuthorization, relayed (the merchant pays the gas; nothing moves). */
export interface CancelCall {
  kind: 'cancel';
  authorizer: Address;
  nonce: Hex;
  signature: Hex;
}

/**
 * A refund: the merchant key's own TransferWithAuthorization to the payer, under the nonce derived
 * from the refund's place, backed by the capture it gives back from (its transaction proves what
 * the payer paid the merchant).
 */
export interface RefundCall {
  kind: 'refund';
  authorization: AuthorizationMessage;
  signature: Hex;
  refund: RefundBacking;
}

export interface RefundBacking {
  authorizationRunId: string;
  sequence: number;
  /** The capture's transaction: its Transfer from the payer to the merchant key bounds the refund. */
  captureTransactionHash: Hex | null;
}

export type RelayCall = CaptureCall | CancelCall | RefundCall | EscrowCall;

export interface RelayRequest {
  /** Idempotency key: the same request sent twice is answered once, with the same transaction. */
  requestId: string;
  /** The workflow waiting for the answer (signal `relayResult`). */
  replyTo: { workflowId: string; runId: string };
  /** The merchant key that must send it (its relayer); the first key when absent. */
  sender?: Address;
  /** The token the call is for, one of the relayer's network's (absent: its first). */
  token?: Address;
  /**
   * The network the call is for (CAIP-2), in the sealed request itself: the activity header that
   * routes a relayer's activities is not sealed, so a relayer refuses a request for another network
   * than its own (absent: the relayer's own network).
   */
  network?: string;
  call: RelayCall;
  /**
   * When the relayer answers: `always` (absent: the transaction's hash, or why not), or only on
   * `failure` (refused, reverted, abandoned): a requester following the chain itself needs no other answer.
   */
  replyOn?: 'always' | 'failure';
  /**
   * When the requesting activity sent it (ISO time). A relayer acts only on fresh requests made for
   * its own run: one copied out of history into a relayer started again is refused (workflows/relayer.ts).
   */
  issuedAt?: string;
}

/** Whether a signal or activity input is a typed relay request (the relayer refuses anything else, raw calldata say). */
export function isTypedRelayRequest(request: unknown): request is RelayRequest {
  return typeof (request as RelayRequest | undefined)?.call?.kind === 'string';
}

/**
 * The EIP-3009 authorization a call consumes: a dropped transaction is resubmitted only while it is
 * unused. An escrow's capture, void or refund consumes none: its guard is the hold's amount it
 * expects on the chain (EscrowCall.expect), and a dropped one is sent again under its account nonce.
 */
export function consumedBy(call: RelayCall): { authorizer: Address; nonce: Hex } | undefined {
  if (call.kind === 'cancel') return { authorizer: call.authorizer, nonce: call.nonce };
  if (call.kind === 'escrow') return call.action === 'authorize' && call.nonce ? { authorizer: call.paymentInfo.payer, nonce: call.nonce } : undefined;
  return { authorizer: call.authorization.from, nonce: call.authorization.nonce };
}

export interface RelayResult {
  requestId: string;
  transactionHash?: Hex;
  /** The merchant account nonce the transaction took. */
  accountNonce?: number;
  /** True when a stuck transaction was replaced with a higher fee (a new hash, same account nonce). */
  replaced?: boolean;
  failure?: CaptureFailure;
}

export interface InflightTransaction {
  requestId: string;
  replyTo: RelayRequest['replyTo'];
  accountNonce: number;
  hash: Hex;
  raw: Hex;
  to: Address;
  data: Hex;
  gas: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  /** The EIP-3009 authorization it consumes (consumedBy); absent for an escrow capture, void or refund. */
  authorizer?: Address;
  nonce?: Hex;
  /** The token that authorization is of, when it is not the transaction's own contract (an escrow's authorize). */
  consumedAt?: Address;
  /** Unix ms of the last broadcast (workflow time), for the stuck check. */
  sentAt: number;
  /** Fee bumps so far; capped so a stuck transaction cannot drain the merchant's gas. */
  bumps?: number;
  /** Its request's answer mode (absent: always). */
  replyOn?: 'always' | 'failure';
  /** Mined, and its receipt read (a requester answered only on failure hears of a revert). */
  checked?: boolean;
}

export interface BroadcastOutcome {
  sent: InflightTransaction[];
  /**
   * A request answered without a transaction (no account nonce taken): refused by the relayer's
   * checks, by its simulation at the pending block, or by the node.
   */
  refused: { requestId: string; failure: CaptureFailure }[];
  /**
   * Requests the chain shows were answered already: their authorization was consumed by this
   * merchant key's own transaction of the same kind, which is the answer again (no new transaction).
   */
  known: RelayResult[];
  /** Requests not tried because an earlier one in the batch failed: they go back to the queue. */
  retry: string[];
  nextAccountNonce: number;
}

export interface InflightReport {
  /** Mined (ours or a replacement): no longer watched. */
  settled: string[];
  /** Replaced with a higher fee, or rebroadcast after being dropped. */
  resent: InflightTransaction[];
  /** Dropped while the authorization was consumed elsewhere: its account nonce was filled with a no-op. */
  abandoned: { requestId: string; failure: CaptureFailure }[];
  /** Mined transactions of requesters answered only on failure, whose receipts were read; those that reverted carry why. */
  checked?: { requestId: string; failure?: CaptureFailure }[];
}

/** Every relayer activity names the merchant key it works for (absent: the network's first key). */
export interface RelayerActivities {
  relayerAccountNonce(request?: { sender?: Address }): Promise<number>;
  /** Builds each item's call (refusing any it cannot check), signs the rest with consecutive nonces, broadcasts them in order. */
  broadcastBatch(request: { startNonce: number; items: RelayRequest[]; sentAt: number; sender?: Address }): Promise<BroadcastOutcome>;
  inspectInflight(request: { inflight: InflightTransaction[]; now: number; stuckAfterMs: number; sender?: Address }): Promise<InflightReport>;
}

/** One relayer per merchant key and network: `relayer-<network>-<key>`. */
export function relayerWorkflowId(merchant: Address, network: string): string {
  return `relayer-${network}-${merchant.toLowerCase()}`;
}

const RELAYER_ID = /^relayer-(eip155:\d+)-(0x[0-9a-f]{40})$/;

/** The merchant key a relayer works for, from its workflow id. */
export function relayerSender(workflowId: string): Address | undefined {
  return (RELAYER_ID.exec(workflowId)?.[2] as Address | undefined) ?? undefined;
}

/** The network a relayer works on, from its workflow id (undefined: not a relayer's id). */
export function relayerNetwork(workflowId: string): string | undefined {
  return RELAYER_ID.exec(workflowId)?.[1];
}
