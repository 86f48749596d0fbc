// EIP-3009 typed data, exactly as a wallet signs it with eth_signTypedData_v4.
// Wire form: every uint256 is a decimal string, so the payload survives JSON and Temporal payloads.
import type { Address, Hex } from 'viem';

export const authorizationPrimaryTypes = ['ReceiveWithAuthorization', 'TransferWithAuthorization'] as const;
export type AuthorizationPrimaryType = (typeof authorizationPrimaryTypes)[number];

export function isAuthorizationPrimaryType(value: unknown): value is AuthorizationPrimaryType {
  return typeof value === 'string' && (authorizationPrimaryTypes as readonly string[]).includes(value);
}

const authorizationFields = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
] as const;

export const eip712DomainFields = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
] as const;

export const authorizationTypes = {
  ReceiveWithAuthorization: authorizationFields,
  TransferWithAuthorization: authorizationFields,
} as const;

export const cancelAuthorizationTypes = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** The token's EIP-712 domain. `name` and `version` are read from the token, never assumed. */
export interface TokenDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

/** The authorization message a payer signs (wire form). */
export interface AuthorizationMessage {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}

/**
 * An authorization's (authorizer, nonce) pair as one key, both lower-case: the token uses each pair at
 * most once, so whatever follows or matches a nonce on the chain keys it by this.
 */
export function pairKey(authorizer: string, nonce: string): string {
  return `${authorizer.toLowerCase()}:${nonce.toLowerCase()}`;
}

/** An eth_signTypedData_v4 payload: what the API hands to the payer's wallet, signable as is. */
export interface TypedDataPayload<P extends string, M> {
  types: Record<string, readonly { name: string; type: string }[]>;
  primaryType: P;
  domain: TokenDomain;
  message: M;
}

export function authorizationTypedData(
  domain: TokenDomain,
  primaryType: AuthorizationPrimaryType,
  message: AuthorizationMessage,
): TypedDataPayload<AuthorizationPrimaryType, AuthorizationMessage> {
  return {
    // Only the primary type's own entry: some wallets refuse payloads with unused types.
    types: { EIP712Domain: eip712DomainFields, [primaryType]: authorizationFields },
    primaryType,
    domain,
    message,
  };
}

export interface CancelAuthorizationMessage {
  authorizer: Address;
  nonce: Hex;
}

export function cancelAuthorizationTypedData(
  domain: TokenDomain,
  message: CancelAuthorizationMessage,
): TypedDataPayload<'CancelAuthorization', CancelAuthorizationMessage> {
  return {
    types: { EIP712Domain: eip712DomainFields, CancelAuthorization: cancelAuthorizationTypes.CancelAuthorization },
    primaryType: 'CancelAuthorization',
    domain,
    message,
  };
}

/** The message with its uint256 fields as bigint, the form viem's signing and contract calls take. */
export function authorizationMessageValues(message: AuthorizationMessage) {
  return {
    from: message.from,
    to: message.to,
    value: BigInt(message.value),
    validAfter: BigInt(message.validAfter),
    validBefore: BigInt(message.validBefore),
    nonce: message.nonce,
  };
}
