// Stable error codes: the contract between authcap and the order services that call it.
// A code never changes meaning; messages are for humans and may improve.

export const errorCodes = {
  validation_error: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  invalid_state: 409,
  order_has_open_authorization: 409,
  /** The order's last attempt moved money: a new attempt would charge twice. */
  order_already_captured: 409,
  /** This (payer, nonce) already belongs to another authorization authcap holds. */
  nonce_already_held: 409,
  idempotency_key_reused: 409,
  idempotency_key_in_use: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  /** This authorization refused too many attempts of one command lately (answer carries Retry-After). */
  too_many_attempts: 429,
  invalid_signature: 422,
  insufficient_balance: 422,
  insufficient_merchant_gas: 422,
  token_policy_blocked: 422,
  authorization_not_yet_valid: 422,
  authorization_expired: 422,
  nonce_already_used: 422,
  /** A pre-signed authorization whose validBefore is further away than AUTHCAP_MAX_VALIDITY_SECONDS. */
  validity_too_long: 422,
  domain_mismatch: 422,
  /** The request names a network this deployment does not serve (the message lists those it does). */
  network_not_served: 422,
  /** The request names a token this deployment does not serve on that network (the message lists those it does). */
  token_not_served: 422,
  recipient_mismatch: 422,
  /**
   * The payer is a contract wallet (ERC-1271) and the token cannot check its signatures onchain (no
   * `bytes signature` overloads, as in FiatToken v2.1): refused when signed, not when captured.
   */
  contract_wallet_unsupported: 422,
  capture_reverted: 422,
  /** The merchant's relayer refused a call it could not check against what it concerns (it signs nothing else). */
  relay_refused: 422,
  /** A partial capture's amount is larger than the payer authorized. */
  capture_exceeds_authorized: 422,
  /** A capture of a held payment asks for more than is still capturable (held, less captures made or under way). */
  amount_exceeds_capturable: 422,
  /** The hold's capture window closed (the escrow's authorizationExpiry): it takes no capture. */
  hold_expired: 422,
  /** The hold already has MAX_CAPTURES_PER_HOLD captures. */
  too_many_captures: 422,
  /** A hold was asked for on a network or token whose deployment names no escrow. */
  holds_not_available: 422,
  /** A refund (with the refunds already made or under way) would give back more than was captured. */
  refund_exceeds_captured: 422,
  /** The authorization already has MAX_REFUNDS_PER_AUTHORIZATION refunds. */
  refund_limit_reached: 422,
  /** The merchant key that received the capture holds too little of the token to give it back. */
  insufficient_merchant_balance: 422,
  /** The refund transaction reverted onchain for a reason the token did not name. */
  refund_reverted: 422,
  /** The refund's nonce had already moved another amount or paid another address (its place reused after a reset): nothing of it moved. */
  refund_sequence_taken: 422,
  /** A webhook URL whose host is (or resolves to) an address authcap must not call: loopback, private, link-local, metadata. */
  webhook_url_not_allowed: 422,
  chain_unavailable: 503,
  /** Temporal cannot be reached (answer carries Retry-After). */
  temporal_unavailable: 503,
  /** No worker answered in time (answer carries Retry-After). */
  worker_unavailable: 503,
  /** The Idempotency-Key database did not answer: nothing was run (answer carries Retry-After). */
  idempotency_unavailable: 503,
  internal_error: 500,
} as const;

export type ErrorCode = keyof typeof errorCodes;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(errorCodes, value);
}

export function httpStatusFor(code: ErrorCode): number {
  return errorCodes[code];
}

/** An error a caller can act on: a stable `code` and a short, readable `message`. */
export class AuthcapError extends Error {
  override readonly name = 'AuthcapError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

/** The last failure of an attempt, as kept on the authorization and shown to callers. */
export interface RecordedError {
  code: ErrorCode;
  message: string;
  /** ISO-8601 time of the failure (workflow time). */
  at: string;
}
