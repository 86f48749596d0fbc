// What the authorization actions take and answer with (the resource itself is domain/authorization.ts).
import type { AuthorizationResource } from '../../domain/authorization.js';
import type { PresignedRequest } from '../requests.js';

/** A draft for the payer to sign. */
export interface CreateAuthorizationRequest {
  orderId: string;
  /** The payer's address. */
  payer: string;
  /** Decimal token amount with at most 6 decimals, e.g. "12.50". */
  amount: string | number;
  /** A shorter window than the worker's AUTHCAP_VALIDITY_SECONDS, if the order needs one. */
  validForSeconds?: number;
  /** CAIP-2 network id, e.g. "eip155:8453"; optional when the deployment serves one network. */
  network?: string;
  /** The token's address or symbol, e.g. "USDC"; optional when the network has one token. */
  token?: string;
  /** Hold the funds in the network's escrow once signed (docs/holds.md); default: what the deployment says for the token. */
  hold?: boolean;
}

/** An authorization signed elsewhere (for example an x402-style TransferWithAuthorization). */
export interface CreatePresignedRequest extends PresignedRequest {
  orderId: string;
  /** The network the payload was signed for (its domain's chain when it carries one). */
  network?: string;
  /** The token it was signed for, by address or symbol (its domain's verifyingContract when it carries one). */
  token?: string;
  /** What the payment pays for (an x402 resource's URL): the search attribute `Resource`, for operators. */
  resource?: string;
}

export interface AuthorizationSummary {
  id: string;
  orderId: string;
  state: string;
  payer: string | null;
  amountMinor: string | null;
  validBefore: string | null;
  createdAt: string;
  /** CAIP-2 network id; null for an authorization started without one (it is on the worker's first). */
  network: string | null;
  /** Token contract; null for an authorization started without a network. */
  token: string | null;
}

export interface ListRequest {
  orderId?: string;
  state?: string;
  payer?: string;
  network?: string;
  /** A token contract, or a symbol the deployment serves. */
  token?: string;
  limit?: number;
  /** A page's `nextPageToken`, for the page after it. */
  pageToken?: string;
}

export interface ListPage {
  data: AuthorizationSummary[];
  /** Pass back as `pageToken` for the next page; null on the last one. */
  nextPageToken: string | null;
}

export interface CaptureOptions {
  /** Capture less than was authorized: the rest goes back to the payer. Of a hold: this part's amount (absent: all that is capturable). */
  amount?: string | number;
  /** A held payment's last capture: what is left goes back to the payer once it succeeded. */
  final?: boolean;
  /** A held payment's capture is one part per key: the same key again answers with that part, never a second capture. */
  idempotencyKey?: string;
  /** How long to wait for the capture to reach its depth before answering with `settled: false` (default 15 s). */
  waitMs?: number;
}

export interface CancelOptions {
  /** How long to wait for the cancellation onchain before answering with `settled: false` (default 15 s). */
  waitMs?: number;
}

export interface VoidRequest {
  reason: string;
  /** Who voided, for the record (default "merchant"). */
  by?: string;
}

export interface WaitOptions {
  /** At most 30. */
  waitSeconds: number;
  /** The state the caller has (default: its state when the wait begins). */
  state?: string;
}

/** A capture or cancellation: the authorization, and whether it settled within the wait. */
export interface CaptureOutcome {
  authorization: AuthorizationResource;
  /** False when it was still in flight after the wait: it carries on, so `wait` or `get` for the outcome. */
  settled: boolean;
}
