// A hold's terms: the escrow payment (domain/escrow.ts `PaymentInfo`) an authorization that holds its
// funds is made of. Pure and deterministic: the same authorization always yields the same terms, so
// the payer's signature (whose nonce is the terms' hash) authorizes exactly one hold, once.
import { keccak256, toHex, zeroAddress, type Address } from 'viem';
import type { PaymentInfo } from './escrow.js';

export interface HoldPolicy {
  /** How long after the payer's authorization deadline the merchant may capture (the escrow's `authorizationExpiry`). */
  captureWindowSeconds: number;
  /** How long after the capture window captured funds may be refunded (the escrow's `refundExpiry`). */
  refundWindowSeconds: number;
  /**
   * How long before `authorizationExpiry` authcap voids what is still held, so a payer never has to
   * reclaim: the void's transaction must land before the escrow stops captures and starts reclaims.
   */
  voidMarginSeconds: number;
}

/** Coinbase's payment acceptance API's: 7 days to capture, 30 to refund; voided an hour before the capture window ends. */
export const DEFAULT_HOLD_POLICY: HoldPolicy = {
  captureWindowSeconds: 7 * 24 * 3_600,
  refundWindowSeconds: 30 * 24 * 3_600,
  voidMarginSeconds: 3_600,
};

export interface HoldRequest {
  /** The merchant key that authorizes, captures, voids and refunds (the escrow's operator). */
  operator: Address;
  /** Where captures are paid (the merchant key itself unless configured otherwise). */
  receiver: Address;
  payer: Address;
  token: Address;
  /** Minor units: what the payer signs for and what is held. */
  amount: bigint;
  /** Unix seconds: until when the payer's signature can authorize the hold (its EIP-3009 `validBefore`). */
  authorizeBy: number;
  /** The authorization's own id (its workflow id): the terms' salt, so no two authorizations share terms. */
  authorizationId: string;
}

export function holdTerms(request: HoldRequest, policy: HoldPolicy = DEFAULT_HOLD_POLICY): PaymentInfo {
  const authorizationExpiry = request.authorizeBy + policy.captureWindowSeconds;
  return {
    operator: request.operator,
    payer: request.payer,
    receiver: request.receiver,
    token: request.token,
    maxAmount: request.amount,
    preApprovalExpiry: request.authorizeBy,
    authorizationExpiry,
    refundExpiry: authorizationExpiry + policy.refundWindowSeconds,
    // No fee: the merchant is the operator and keeps all it captures.
    minFeeBps: 0,
    maxFeeBps: 0,
    feeReceiver: zeroAddress,
    salt: holdSalt(request.authorizationId),
  };
}

/** The terms' salt: a hash of the authorization's id, so terms (and the payer's nonce) are the authorization's own. */
export function holdSalt(authorizationId: string): bigint {
  return BigInt(keccak256(toHex(`authcap.hold:${authorizationId}`)));
}

/** Unix seconds at which authcap voids what is still held (before the escrow would let the payer reclaim it). */
export function voidDeadline(terms: Pick<PaymentInfo, 'authorizationExpiry'>, policy: Pick<HoldPolicy, 'voidMarginSeconds'> = DEFAULT_HOLD_POLICY): number {
  return terms.authorizationExpiry - policy.voidMarginSeconds;
}
