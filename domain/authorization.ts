// The authorization as callers see it, and what a workflow is started with. JSON-safe (no bigint):
// it crosses Temporal payloads and the HTTP API unchanged.
import type { Address, Hex } from 'viem';
import type { RecordedError } from './errors.js';
import type { WirePaymentInfo } from './escrowCall.js';
import type { AuthorizationChain } from './chain.js';
import type { AuthorizationMessage, AuthorizationPrimaryType, CancelAuthorizationMessage, TokenDomain, TypedDataPayload } from './eip3009.js';

/** Lifecycle states callers see (design.md). `drafting` is the moment before the typed data exists. */
export const authorizationStates = [
  'drafting',
  'drafted',
  'stored',
  /** A hold's authorize is on its way to the escrow. */
  'holding',
  /** The escrow holds the funds: captures in parts, a void of the rest. */
  'held',
  'capturing',
  'canceling',
  'captured',
  'canceled',
  'voided',
  'expired',
  'rejected',
] as const;
export type AuthorizationState = (typeof authorizationStates)[number];
/** `rejected`: a pre-signed authorization that failed verification and was never stored. */
export const finalStates: readonly AuthorizationState[] = ['captured', 'canceled', 'voided', 'expired', 'rejected'];

export interface DraftRequest {
  orderId: string;
  payer: Address;
  /** Minor units, decimal string. */
  value: string;
}

export interface PresignedAuthorization {
  primaryType: AuthorizationPrimaryType;
  authorization: AuthorizationMessage;
  signature: Hex;
  /** A pre-signed hold: the escrow's terms the payer signed (the nonce is their hash; docs/holds.md). */
  hold?: { paymentInfo: WirePaymentInfo };
}

/** Workflow input: draft a new authorization for the payer to sign, or store one signed elsewhere. */
export type AuthorizationWorkflowInput =
  | ((
      | {
          orderId: string;
          draft: { payer: Address; value: string; validForSeconds?: number /** Hold the funds in the network's escrow (docs/holds.md). */; hold?: boolean };
        }
      | { orderId: string; presigned: PresignedAuthorization }
    ) & {
      /** The network and token (absent: the worker's first network and token). */
      chain?: AuthorizationChain;
      /** Operators' and tests' knobs over the worker's policy for this one workflow (not on the API). */
      policyOverrides?: { historyLimit?: number; reconcileIntervalSeconds?: number };
      /**
       * When the API asked for this start (ISO 8601), stamped as it starts the run: a run refuses a
       * start without one, or much older than itself (a copy).
       */
      requestedAt?: string;
    })
  /** Continue-as-new: the machine's persisted state and what the workflow keeps beside it. */
  | { orderId: string; resume: ResumedAuthorization };

export interface ResumedAuthorization {
  /** Lifecycle.persisted(): the machine's value and context, and the history lines. Opaque here. */
  lifecycle: unknown;
  policy: { reconcileIntervalSeconds: number; maxValiditySeconds: number; historyLimit: number };
  fromBlock?: string;
  /** How many runs came before (for operators and tests). */
  runs: number;
}

export interface CaptureRecord {
  transactionHash: Hex;
  /** Block that holds the capture; null until it is seen in a block. */
  blockNumber: string | null;
  blockHash: Hex | null;
  submittedAt: string | null;
  /** When the AuthorizationUsed log first appeared in the `pending` (preconfirmed) view. */
  preconfirmedAt: string | null;
  /** When the capture reached the confirmation depth: the payment is final. */
  confirmedAt: string | null;
  /** Who consumed the nonce: authcap's own submission, or someone else seen onchain. */
  by: 'authcap' | 'onchain';
  /**
   * What the merchant kept (decimal token amount): the authorized amount, or less after a partial
   * capture, whose difference went back to the payer as a refund (reason `partial_capture`).
   * Absent in records made before partial captures: the authorized amount.
   */
  amount?: string;
}

export interface CancellationRecord {
  transactionHash: Hex | null;
  blockNumber: string | null;
  at: string;
  by: 'authcap' | 'onchain';
}

export interface VoidRecord {
  reason: string;
  by: string;
  at: string;
}

/** Who moved an authorization: the order service (merchant), the payer, an operator (by name), the chain, authcap. */
export type HistoryActor = 'merchant' | 'payer' | 'operator' | 'chain' | 'authcap' | (string & {});

export interface HistoryEntry {
  state: AuthorizationState;
  at: string;
  /** The machine event behind this line (e.g. CAPTURE_CONFIRMED). */
  event?: string;
  actor?: HistoryActor;
  /** Why: a failure's code and message, or a void's reason. */
  reason?: string;
  transactionHash?: `0x${string}`;
}

/** What the `status` query returns; the API resource is this plus its id. The signature is never in it. */
export interface AuthorizationView {
  orderId: string;
  /** CAIP-2 network id, e.g. "eip155:8453" (absent in the workflow's view of an authorization started without one; the client fills it). */
  network?: string;
  /** The token: its contract, symbol and decimals (amounts are in these decimals). */
  token?: TokenRef;
  state: AuthorizationState;
  primaryType: AuthorizationPrimaryType;
  /** Decimal token amount, e.g. "12.5". */
  amount: string;
  /**
   * What the merchant holds of this authorization: what it kept once `captured`; while a partial
   * capture's difference is on its way back (`capturing`, after the capture landed), all it captured;
   * "0" before.
   */
  amountCaptured: string;
  /** While `capturing`: what the capture keeps (all of it, or a partial capture's amount); null otherwise. */
  amountCapturing?: string | null;
  /**
   * What a capture may take now: the authorized amount while `stored`; of a hold, what the escrow
   * holds less the parts captured or under way; "0" otherwise.
   */
  amountCapturable?: string;
  /** The captures of this authorization: a held payment's parts, each exactly once; a plain capture is one entry. */
  captures?: CaptureView[];
  /** The escrow hold, when the authorization holds its funds (docs/holds.md); null otherwise. */
  hold?: HoldView | null;
  /**
   * What refunds have given back of the captured amount ("0" until one succeeds). The workflow's own
   * view always says "0": refunds after the capture are kept by its refunds workflow, and the
   * client adds their sum when it reads a captured authorization.
   */
  amountRefunded: string;
  authorization: AuthorizationMessage | null;
  domain: TokenDomain | null;
  typedData: TypedDataPayload<AuthorizationPrimaryType, AuthorizationMessage> | null;
  cancellationTypedData: TypedDataPayload<'CancelAuthorization', CancelAuthorizationMessage> | null;
  capture: CaptureRecord | null;
  cancellation: CancellationRecord | null;
  void: VoidRecord | null;
  lastError: RecordedError | null;
  history: HistoryEntry[];
}

/** One capture: a part of a held payment (its own id, transaction and event), or a plain authorization's capture. */
export interface CaptureView {
  /** `cap_<first run id>_<n>`: stable, the id its `authorization.capture_succeeded` event names. */
  id: string;
  /** Decimal token amount. */
  amount: string;
  /** The last capture of a hold: what was left went back to the payer after it. */
  final: boolean;
  /** `pending` (waiting its turn), `submitted` (sent; waiting for its block at depth), `succeeded`, `failed`. */
  status: 'pending' | 'submitted' | 'succeeded' | 'failed';
  transactionHash: Hex | null;
  blockNumber: string | null;
  failure: RecordedError | null;
  requestedAt: string;
  succeededAt: string | null;
}

/** A held payment's escrow: its terms as the payer signed them, what is held, and what went back. */
export interface HoldView {
  /** The escrow's id of the payment (its events carry it). */
  paymentInfoHash: Hex;
  /** What the escrow holds, or held (decimal token amount; "0" until the authorize is at depth). */
  amountHeld: string;
  authorizeTransactionHash: Hex | null;
  /** The escrow's capture window ends here; authcap voids what is left before (`voidAt`). */
  captureBefore: string;
  /** When authcap voids what is left if nothing else ended the hold first. */
  voidAt: string;
  /** Refunds of what was captured go through the escrow until then. */
  refundBefore: string;
  /** The terms the payer signed (PaymentInfo, numbers as decimal strings). */
  terms: WirePaymentInfo;
  /** What went back to the payer: authcap's void (the merchant's, a final capture's or at `voidAt`), or the payer's reclaim. */
  release: { kind: 'void' | 'reclaim'; amount: string; transactionHash: Hex | null; at: string } | null;
}

export interface TokenRef {
  address: Address;
  symbol: string;
  decimals: number;
}

/** The memo key under which the workflow keeps its AuthorizationView (encrypted like every payload). */
export const VIEW_MEMO_KEY = 'authorization';
/** The memo key holding the attempt's first run id (resource ids name it; it survives continue-as-new). */
export const FIRST_RUN_MEMO_KEY = 'firstRunId';

/** The authorization as the API answers it: its id, and every capture field filled (domain/captures.ts). */
export interface AuthorizationResource extends AuthorizationView {
  id: string;
  amountCapturable: string;
  captures: CaptureView[];
  hold: HoldView | null;
}
