// Validation of what callers send, before anything reaches Temporal: bad input changes nothing.
import type { Hex } from 'viem';
import { parseAddress, parseBytes32, parseSignature } from '../domain/address.js';
import { parseAmount, parseUint } from '../domain/amount.js';
import { authorizationStates, type AuthorizationState, type PresignedAuthorization } from '../domain/authorization.js';
import { isAuthorizationPrimaryType, type TokenDomain } from '../domain/eip3009.js';
import type { WirePaymentInfo } from '../domain/escrowCall.js';
import { AuthcapError } from '../domain/errors.js';
import { unsearchable } from './visibilityQuery.js';

const MAX_ORDER_ID_LENGTH = 200;

/**
 * An order id for a new authorization or a search: besides being present and short enough, it must
 * be one Temporal visibility can find again exactly (see visibilityQuery.ts), or list and the
 * events feed would answer with another order's authorization, or with nothing.
 */
export function parseOrderId(input: unknown): string {
  if (typeof input !== 'string' || !input.trim()) throw new AuthcapError('validation_error', 'orderId is required', { field: 'orderId' });
  if (input.length > MAX_ORDER_ID_LENGTH) {
    throw new AuthcapError('validation_error', `orderId is longer than ${MAX_ORDER_ID_LENGTH} characters`, { field: 'orderId' });
  }
  const problem = unsearchable(input);
  if (problem) throw new AuthcapError('validation_error', `orderId ${problem}`, { field: 'orderId' });
  return input;
}

export function parseValidFor(input: unknown): number | undefined {
  if (input === undefined || input === null) return undefined;
  if (typeof input !== 'number' || !Number.isSafeInteger(input) || input < 1) {
    throw new AuthcapError('validation_error', 'validForSeconds must be a positive whole number of seconds');
  }
  return input;
}

export function parseState(input: unknown): AuthorizationState | undefined {
  if (input === undefined || input === null || input === '') return undefined;
  if (typeof input !== 'string' || !(authorizationStates as readonly string[]).includes(input)) {
    throw new AuthcapError('validation_error', `state must be one of ${authorizationStates.join(', ')}`);
  }
  return input as AuthorizationState;
}

export interface PresignedRequest {
  primaryType: unknown;
  authorization: unknown;
  signature: unknown;
  domain?: unknown;
  /** A pre-signed hold: `{paymentInfo}`, the escrow's terms the payer signed for its payment collector. */
  hold?: unknown;
}

export function parsePresigned(request: PresignedRequest): PresignedAuthorization & { domain?: TokenDomain } {
  if (!isAuthorizationPrimaryType(request.primaryType)) {
    throw new AuthcapError('validation_error', 'primaryType must be ReceiveWithAuthorization or TransferWithAuthorization');
  }
  const a = request.authorization as Record<string, unknown> | undefined;
  if (typeof a !== 'object' || a === null) throw new AuthcapError('validation_error', 'authorization must be an object');
  const value = parseUint(a.value, 'authorization.value');
  if (value === 0n) throw new AuthcapError('validation_error', 'authorization.value must be greater than zero');
  const validAfter = parseUint(a.validAfter, 'authorization.validAfter');
  const validBefore = parseUint(a.validBefore, 'authorization.validBefore');
  if (validBefore <= validAfter) throw new AuthcapError('validation_error', 'authorization.validBefore must be after validAfter');
  const parsed: PresignedAuthorization & { domain?: TokenDomain } = {
    primaryType: request.primaryType,
    authorization: {
      from: parseAddress(a.from, 'authorization.from'),
      to: parseAddress(a.to, 'authorization.to'),
      value: value.toString(),
      validAfter: validAfter.toString(),
      validBefore: validBefore.toString(),
      nonce: parseBytes32(a.nonce, 'authorization.nonce'),
    },
    signature: parseSignature(request.signature) as Hex,
  };
  if (request.domain !== undefined) parsed.domain = parseDomain(request.domain);
  if (request.hold !== undefined) parsed.hold = { paymentInfo: parsePaymentInfo((request.hold as { paymentInfo?: unknown } | null)?.paymentInfo) };
  return parsed;
}

const PAYMENT_INFO_ADDRESSES = ['operator', 'payer', 'receiver', 'token', 'feeReceiver'] as const;
const PAYMENT_INFO_NUMBERS = ['maxAmount', 'preApprovalExpiry', 'authorizationExpiry', 'refundExpiry', 'minFeeBps', 'maxFeeBps', 'salt'] as const;

/** The escrow's PaymentInfo, every field present (numbers as decimal strings): whether it fits this merchant the worker decides. */
function parsePaymentInfo(input: unknown): WirePaymentInfo {
  const info = input as Record<string, unknown> | null | undefined;
  if (typeof info !== 'object' || info === null) throw new AuthcapError('validation_error', 'hold.paymentInfo must be the escrow terms the payer signed');
  const extra = Object.keys(info).filter(
    (k) => !(PAYMENT_INFO_ADDRESSES as readonly string[]).includes(k) && !(PAYMENT_INFO_NUMBERS as readonly string[]).includes(k),
  );
  if (extra.length) throw new AuthcapError('validation_error', `hold.paymentInfo has no field ${extra[0]}`);
  const out: Record<string, string> = {};
  for (const key of PAYMENT_INFO_ADDRESSES) out[key] = parseAddress(info[key], `hold.paymentInfo.${key}`);
  for (const key of PAYMENT_INFO_NUMBERS) out[key] = parseUint(info[key], `hold.paymentInfo.${key}`).toString();
  return out as WirePaymentInfo;
}

function parseDomain(input: unknown): TokenDomain {
  const d = input as Record<string, unknown> | null;
  if (typeof d !== 'object' || d === null || typeof d.name !== 'string' || typeof d.version !== 'string') {
    throw new AuthcapError('validation_error', 'domain must have name, version, chainId and verifyingContract');
  }
  const chainId = Number(d.chainId);
  if (!Number.isSafeInteger(chainId) || chainId < 1) throw new AuthcapError('validation_error', 'domain.chainId must be a chain id');
  return { name: d.name, version: d.version, chainId, verifyingContract: parseAddress(d.verifyingContract, 'domain.verifyingContract') };
}

export { parseAmount };
