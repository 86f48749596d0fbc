// What capture and cancel workflows ask of the merchant's relayer, and what it answers.
import type { Address, Hex } from 'viem';
import type { CaptureFailure } from './facts.js';

export interface RelayRequest {
  /** Idempotency key: the same request sent twice is answered once, with the same transaction. */
  requestId: string;
  /** The workflow waiting for the answer (signal `relayResult`). */
  replyTo: { workflowId: string; runId: string };
  to: Address;
  data: Hex;
  gas: string;
  /** The authorization this transaction consumes: a dropped one is resubmitted only while it is unused. */
  authorizer: Address;
  nonce: Hex;
  /** The merchant key that must send it (its relayer); the first key when absent. */
  sender?: Address;
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
  authorizer: Address;
  nonce: Hex;
  /** Unix ms of the last broadcast (workflow time), for the stuck check. */
  sentAt: number;
  /** Fee bumps so far; capped so a stuck transaction cannot drain the merchant's gas. */
  bumps?: number;
}

export interface BroadcastOutcome {
  sent: InflightTransaction[];
  /** A request refused outright by the node (its account nonce was not used). */
  refused: { requestId: string; failure: CaptureFailure }[];
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
}

/** Every relayer activity names the merchant key it works for (absent: the first key, as recorded before several keys). */
export interface RelayerActivities {
  relayerAccountNonce(request?: { sender?: Address }): Promise<number>;
  broadcastBatch(request: { startNonce: number; items: RelayRequest[]; sentAt: number; sender?: Address }): Promise<BroadcastOutcome>;
  inspectInflight(request: { inflight: InflightTransaction[]; now: number; stuckAfterMs: number; sender?: Address }): Promise<InflightReport>;
}

export function relayerWorkflowId(merchant: Address): string {
  return `relayer-${merchant.toLowerCase()}`;
}

/** The merchant key a relayer works for, from its workflow id. */
export function relayerSender(workflowId: string): Address | undefined {
  const match = /^relayer-(0x[0-9a-f]{40})$/.exec(workflowId);
  return match ? (match[1] as Address) : undefined;
}
