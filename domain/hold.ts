// A hold's terms: the escrow payment (domain/escrow.ts `PaymentInfo`) an authorization that holds its
// funds is made of. Pure and deterministic: the same authorization always yields the same terms, so
// the payer's signature (whose nonce is the terms' hash) authorizes exactly one hold, once.
import { keccak256, toHex, zeroAddress, type Address } from 'viem';
import type { ErrorCode } from './errors.js';
import { holdAuthorizationMessage, type EscrowAddresses, type PaymentInfo } from './escrow.js';

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

/** What a pre-signed hold is checked against: this worker's merchant keys, token and escrow, and chain time. */
export interface PresignedHoldContext {
  isMerchant(address: string): boolean;
  token: Address;
  chainId: number;
  escrow: EscrowAddresses;
  nowSeconds: number;
  /** The longest capture window taken (the escrow's authorizationExpiry past the payer's deadline). */
  maxCaptureWindowSeconds?: number;
}

/**
 * Why a pre-signed hold cannot be taken, or undefined: its authorization must be exactly the payment
 * collector's ReceiveWithAuthorization of these terms (so the escrow takes it), and the terms this
 * merchant's own (a merchant key operates it and is paid, this token, no fee) with a capture window
 * authcap can keep (it voids what is left before the window ends).
 */
export function presignedHoldRefusal(
  terms: PaymentInfo,
  authorization: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string },
  primaryType: string,
  ctx: PresignedHoldContext,
): { code: ErrorCode; reason: string } | undefined {
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  const message = holdAuthorizationMessage(terms, ctx.chainId, ctx.escrow);
  if (primaryType !== 'ReceiveWithAuthorization')
    return { code: 'validation_error', reason: "a hold is signed as the payment collector's ReceiveWithAuthorization" };
  if (!same(authorization.to, ctx.escrow.paymentCollector))
    return { code: 'recipient_mismatch', reason: `a hold pays the escrow's payment collector ${ctx.escrow.paymentCollector}, not ${authorization.to}` };
  if (!ctx.isMerchant(terms.operator) || !same(terms.receiver, terms.operator))
    return {
      code: 'recipient_mismatch',
      reason: `the hold is operated by ${terms.operator} and pays ${terms.receiver}: both must be one of this merchant's keys`,
    };
  if (!same(terms.token, ctx.token)) return { code: 'domain_mismatch', reason: `the hold is in ${terms.token}, not this merchant's token ${ctx.token}` };
  if (terms.maxFeeBps !== 0 || terms.minFeeBps !== 0 || !same(terms.feeReceiver, zeroAddress))
    return { code: 'validation_error', reason: 'a hold taken by authcap carries no fee' };
  if (
    !same(authorization.from, terms.payer) ||
    BigInt(authorization.value) !== terms.maxAmount ||
    authorization.validAfter !== '0' ||
    BigInt(authorization.validBefore) !== BigInt(terms.preApprovalExpiry) ||
    !same(authorization.nonce, message.nonce)
  )
    return {
      code: 'validation_error',
      reason:
        "the authorization is not the collector's ReceiveWithAuthorization of these terms (from = payer, value = maxAmount, validAfter 0, validBefore = preApprovalExpiry, nonce = the terms' hash)",
    };
  const window = terms.authorizationExpiry - terms.preApprovalExpiry;
  if (terms.authorizationExpiry < terms.preApprovalExpiry || terms.refundExpiry < terms.authorizationExpiry)
    return { code: 'validation_error', reason: 'the terms must end authorizing, then capturing, then refunding, in that order' };
  if (terms.authorizationExpiry - DEFAULT_HOLD_POLICY.voidMarginSeconds <= ctx.nowSeconds)
    return { code: 'hold_expired', reason: 'the capture window of these terms closes within the hour: authcap would void the hold at once' };
  if (window > (ctx.maxCaptureWindowSeconds ?? 30 * 24 * 3_600))
    return { code: 'validity_too_long', reason: `the capture window is ${window} s; at most ${ctx.maxCaptureWindowSeconds ?? 30 * 24 * 3_600} s is taken` };
  return undefined;
}
