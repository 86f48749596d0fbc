// Refunds: money going back from the merchant key that received a capture to the payer. JSON-safe
// (no bigint): records cross Temporal payloads, the memo and the HTTP API unchanged.
//
// EIP-3009 can only move the exact value the payer signed, so everything given back is a refund:
// a partial capture captures the signed value and returns the difference (sequence 0, reason
// `partial_capture`, kept by the authorization's own workflow); refunds asked for after the capture
// (sequence 1 on) are kept by the authorization's refunds workflow, which serializes them.
import type { AuthorizationChain } from './chain.js';
import type { TokenRef } from './authorization.js';
import type { Address, Hex } from 'viem';
import { decimalsOf, formatAmount } from './amount.js';
import type { RecordedError } from './errors.js';
import { resourceId } from './ids.js';

export const refundStates = ['pending', 'succeeded', 'failed'] as const;
export type RefundState = (typeof refundStates)[number];

/** The reason authcap gives the part of a partial capture it sends back; callers may not use it. */
export const PARTIAL_CAPTURE_REASON = 'partial_capture';

/** The most refunds (any state) one authorization keeps: nobody can grow its cost without bound. */
export const MAX_REFUNDS_PER_AUTHORIZATION = 100;

/**
 * What a refund is doing, the refund machine's state (workflows/refundMachine.ts). Operators read it
 * in the Temporal UI; callers see `state`, which only says pending, succeeded or failed.
 */
export const refundStages = ['prechecking', 'submitting', 'submitted', 'preconfirmed', 'awaitingExpiry', 'succeeded', 'failed'] as const;
export type RefundStage = (typeof refundStages)[number];

/** A refund as the workflows keep it (the memo holds these). */
export interface RefundRecord {
  /** 0: a partial capture's release; 1 on: refunds asked for after the capture, in order. */
  sequence: number;
  /** The authorization's network and token (absent for an authorization started without one: the deployment's first). */
  chain?: AuthorizationChain;
  /** The authorization attempt (its first run id) the refund gives money back for. */
  authorizationRunId: string;
  orderId: string;
  payer: Address;
  /** The merchant key that received the capture: it signs and sends the refund. */
  merchant: Address;
  amountMinor: string;
  reason: string | null;
  stage: RefundStage;
  /**
   * The EIP-3009 nonce of the merchant's TransferWithAuthorization, the same for every attempt of
   * this refund: the token itself accepts it once, so no retry can ever pay twice.
   */
  nonce: Hex | null;
  /** Signed attempts so far (an attempt not mined before its short validity ends is signed again). */
  attempts: number;
  /** validBefore of the attempt in flight (unix seconds). */
  validBefore: string | null;
  /** The block its first attempt was signed at: no log of its nonce is older (log reads start here). */
  fromBlock?: string | null;
  /** The capture it gives back from: the merchant key signs and sends nothing that capture does not back. */
  captureTransactionHash?: Hex | null;
  /**
   * A held payment's refund (through the escrow's `refund`): what the escrow said was refundable when
   * it went out. The relayer sends it only while the escrow still says so, so it lands once.
   */
  escrowExpectRefundableMinor?: string | null;
  transactionHash: Hex | null;
  blockNumber: string | null;
  blockHash: Hex | null;
  /** Why the refund failed (state `failed`): nothing moved. */
  failure: RecordedError | null;
  /** The last thing that went wrong on the way (an attempt that reverted or expired), for operators. */
  lastError: RecordedError | null;
  createdAt: string;
  preconfirmedAt: string | null;
  succeededAt: string | null;
  failedAt: string | null;
  /** Who asked: a digest of the caller's Idempotency-Key (or a fresh id), and of the request itself. */
  requestKey: string | null;
  requestFingerprint: string | null;
}

/** A refund as callers see it (HTTP API, typed client, events). */
export interface Refund {
  id: string;
  authorizationId: string;
  orderId: string;
  /** CAIP-2 network id (absent for an authorization started without one: the deployment's first). */
  network?: string;
  /** The token given back, as on its authorization. */
  token?: TokenRef;
  /** Decimal token amount, e.g. "3". */
  amount: string;
  reason: string | null;
  state: RefundState;
  /** The refund's transaction; for a failed refund, its last attempt (reverted or never mined: evidence, and its gas). */
  transactionHash: Hex | null;
  /** Why it failed (state `failed`, final: nothing moved). */
  failure: { code: RecordedError['code']; message: string } | null;
  /** While `pending`: what went wrong on the way and is being retried (a partial capture's release blocked by the token, say). */
  lastError: { code: RecordedError['code']; message: string } | null;
  createdAt: string;
  succeededAt: string | null;
}

export function refundStateOf(stage: RefundStage): RefundState {
  return stage === 'succeeded' ? 'succeeded' : stage === 'failed' ? 'failed' : 'pending';
}

const PREFIX = 'ref_';

/** `ref_<order, base64url>.<authorization run id>.<sequence>`: names where the refund is kept. */
export function refundId(orderId: string, authorizationRunId: string, sequence: number): string {
  return `${PREFIX}${Buffer.from(orderId, 'utf8').toString('base64url')}.${authorizationRunId}.${sequence}`;
}

/** The authorization and place a refund id names, or undefined when it is not one of ours (404). */
export function parseRefundId(id: string): { orderId: string; authorizationRunId: string; sequence: number; authorizationId: string } | undefined {
  if (typeof id !== 'string' || !id.startsWith(PREFIX) || id.length > 400) return undefined;
  const match = /^([A-Za-z0-9_-]+)\.([0-9a-f-]{36})\.(0|[1-9]\d{0,4})$/i.exec(id.slice(PREFIX.length));
  if (!match) return undefined;
  const orderId = Buffer.from(match[1]!, 'base64url').toString('utf8');
  if (!orderId || Buffer.from(orderId, 'utf8').toString('base64url') !== match[1]) return undefined;
  const authorizationRunId = match[2]!.toLowerCase();
  return { orderId, authorizationRunId, sequence: Number(match[3]), authorizationId: resourceId(orderId, authorizationRunId) };
}

/** Built outside the workflow sandbox (ids use Buffer): the record as callers see it. */
export function publicRefund(record: RefundRecord): Refund {
  return {
    id: refundId(record.orderId, record.authorizationRunId, record.sequence),
    authorizationId: resourceId(record.orderId, record.authorizationRunId),
    orderId: record.orderId,
    ...(record.chain
      ? { network: record.chain.network, token: { address: record.chain.token, symbol: record.chain.symbol, decimals: record.chain.decimals } }
      : {}),
    // In the token's own decimals (the workflow records them with its chain).
    amount: formatAmount(BigInt(record.amountMinor), decimalsOf(record.chain)),
    reason: record.reason,
    state: refundStateOf(record.stage),
    transactionHash: record.transactionHash,
    failure: record.failure ? { code: record.failure.code, message: record.failure.message } : null,
    lastError:
      record.stage !== 'succeeded' && record.stage !== 'failed' && record.lastError ? { code: record.lastError.code, message: record.lastError.message } : null,
    createdAt: record.createdAt,
    succeededAt: record.succeededAt,
  };
}

/** One authorization's refunds workflow: by the attempt's first run id, as its events are keyed. */
export function refundsWorkflowId(authorizationRunId: string): string {
  return `refunds-${authorizationRunId}`;
}

export const REFUNDS_WORKFLOW_TYPE = 'refundsWorkflow';
/**
 * Memo keys. The refunds workflow keeps its totals under `ledger` and each refund under a key of its
 * own: a memo upsert rewrites only the keys it names, so a change to one refund costs its record,
 * not the whole ledger (history stays small however many refunds there are). A partial capture's
 * release sits beside the authorization's own view.
 */
export const LEDGER_MEMO_KEY = 'ledger';
export const RELEASE_MEMO_KEY = 'release';
export const refundMemoKey = (sequence: number) => `refund-${String(sequence).padStart(3, '0')}`;
const REFUND_MEMO_KEY = /^refund-\d{3,}$/;

/** The refunds workflow's totals, as its memo keeps them. */
export interface RefundLedgerSummary {
  authorizationRunId: string;
  orderId: string;
  amountCapturedMinor: string;
  amountRefundedMinor: string;
  /** Open: accepts refunds. Closed once nothing is left to refund or the refund window ended. */
  open: boolean;
  /** When the refund window ends (ISO-8601). */
  refundableUntil: string;
}

/** The ledger as the API reads it: the totals and every refund, in order. */
export interface RefundLedgerView extends RefundLedgerSummary {
  refunds: RefundRecord[];
}

/** The ledger from a refunds workflow's (decoded) memo; undefined when it has none yet. */
export function ledgerFromMemo(memo: Record<string, unknown> | undefined): RefundLedgerView | undefined {
  const summary = memo?.[LEDGER_MEMO_KEY] as RefundLedgerSummary | undefined;
  if (!summary) return undefined;
  const refunds = Object.entries(memo ?? {})
    .filter(([key]) => REFUND_MEMO_KEY.test(key))
    .map(([, record]) => record as RefundRecord)
    .sort((a, b) => a.sequence - b.sequence);
  return { ...summary, refunds };
}

/** The authorization as refund events carry it: enough to know where it stands, not its whole record. */
export interface RefundedAuthorization {
  id: string;
  orderId: string;
  state: string;
  amount: string;
  amountCaptured: string;
  amountRefunded: string;
}

/** Sum of what a ledger has given back (succeeded) and what it has promised (pending). */
export function ledgerTotals(refunds: readonly Pick<RefundRecord, 'stage' | 'amountMinor' | 'sequence'>[]): { refunded: bigint; pending: bigint } {
  let refunded = 0n;
  let pending = 0n;
  for (const r of refunds) {
    // The release of a partial capture gives back money that was never captured: it is not a refund of it.
    if (r.sequence === 0) continue;
    if (r.stage === 'succeeded') refunded += BigInt(r.amountMinor);
    else if (r.stage !== 'failed') pending += BigInt(r.amountMinor);
  }
  return { refunded, pending };
}
