// Who signed this typed data, worked out without the chain: pure and synchronous, so a workflow's
// update validator can use it to refuse a stranger's signature before the update enters history.
// Only a plain ECDSA signature can be judged this way: a contract wallet (ERC-1271, ERC-6492) needs
// the chain, which the verify activity asks.
import { secp256k1 } from '@noble/curves/secp256k1';
import { hashTypedData, type Address, type Hex } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import {
  authorizationMessageValues,
  authorizationTypes,
  cancelAuthorizationTypes,
  type AuthorizationMessage,
  type AuthorizationPrimaryType,
  type TokenDomain,
} from './eip3009.js';

/** The EIP-712 digest the payer signs for this authorization. */
export function authorizationDigest(domain: TokenDomain, primaryType: AuthorizationPrimaryType, authorization: AuthorizationMessage): Hex {
  return hashTypedData({ domain, types: authorizationTypes, primaryType, message: authorizationMessageValues(authorization) });
}

/** The EIP-712 digest the payer signs to cancel this authorization's nonce. */
export function cancelDigest(domain: TokenDomain, authorizer: Address, nonce: Hex): Hex {
  return hashTypedData({ domain, types: cancelAuthorizationTypes, primaryType: 'CancelAuthorization', message: { authorizer, nonce } });
}

/** The form a payer's own signature is judged in, here and in the Node processes (runtime/secp256k1.ts): 65 bytes of hex. */
export function isPlainEcdsaForm(signature: Hex): boolean {
  return /^0x[0-9a-fA-F]{130}$/.test(signature);
}

/**
 * The address whose key made this 65-byte (r, s, v) signature over `digest`, or undefined when it is
 * no ECDSA signature at all (another length, v not 27/28 or 0/1, r or s out of range).
 */
export function recoverSigner(digest: Hex, signature: Hex): Address | undefined {
  if (!isPlainEcdsaForm(signature)) return undefined;
  const v = Number.parseInt(signature.slice(130, 132), 16);
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return undefined;
  try {
    const point = secp256k1.Signature.fromCompact(signature.slice(2, 130)).addRecoveryBit(recovery).recoverPublicKey(digest.slice(2));
    return publicKeyToAddress(`0x${point.toHex(false)}`);
  } catch {
    return undefined;
  }
}

/** Whether `signature` is `signer`'s plain ECDSA signature over `digest` (case-insensitive address match). */
export function isEcdsaSignatureOf(digest: Hex, signature: Hex, signer: Address): boolean {
  return recoverSigner(digest, signature)?.toLowerCase() === signer.toLowerCase();
}
