// The authorization as callers see it, and what a workflow is started with. JSON-safe (no bigint):
// it crosses Temporal payloads and the HTTP API unchanged.
import type { Address, Hex } from 'viem';
import type { RecordedError } from './errors.js';
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

export interface TokenRef {
  address: Address;
  symbol: string;
  decimals: number;
}

/** The memo key under which the workflow keeps its AuthorizationView (encrypted like every payload). */
export const VIEW_MEMO_KEY = 'authorization';
/** The memo key holding the attempt's first run id (resource ids name it; it survives continue-as-new). */
export const FIRST_RUN_MEMO_KEY = 'firstRunId';

export interface AuthorizationResource extends AuthorizationView {
  id: string;
}
