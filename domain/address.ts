import { getAddress, isAddress, isHex, type Address, type Hex } from 'viem';
import { AuthcapError } from './errors.js';
import { canonicalEcdsa, isEcdsaSignature } from './signature.js';

/** A 20-byte address in checksum form, or a validation_error naming the field. */
export function parseAddress(input: unknown, field: string): Address {
  if (typeof input !== 'string' || !isAddress(input, { strict: false })) {
    throw new AuthcapError('validation_error', `${field} must be a 20-byte hex address (0x followed by 40 hex digits)`);
  }
  // Mixed case is an EIP-55 checksum: a wrong one means a mistyped address, not a different spelling.
  const digits = input.slice(2);
  const uncheckedCase = digits === digits.toLowerCase() || digits === digits.toUpperCase();
  if (!uncheckedCase && !isAddress(input, { strict: true })) {
    throw new AuthcapError('validation_error', `${field} has an invalid EIP-55 checksum; check the address or send it in lower case`);
  }
  return getAddress(input);
}

/** A 32-byte hex value (an EIP-3009 nonce), lower-cased. */
export function parseBytes32(input: unknown, field: string): Hex {
  if (typeof input !== 'string' || !isHex(input, { strict: true }) || input.length !== 66) {
    throw new AuthcapError('validation_error', `${field} must be 32 bytes as 0x-prefixed hex (66 characters)`);
  }
  return input.toLowerCase() as Hex;
}

/**
 * A signature as hex bytes: 64/65-byte ECDSA, or longer for ERC-1271 contract wallets. ECDSA ones come
 * back canonical (65 bytes, low s): a high-s twin is valid math but the token refuses it, so storing it
 * as given would leave an authorization that shows `stored` and can never be captured.
 */
export function parseSignature(input: unknown): Hex {
  if (typeof input !== 'string' || !isHex(input, { strict: true }) || (input.length - 2) % 2 !== 0) {
    throw new AuthcapError('validation_error', 'signature must be 0x-prefixed hex bytes');
  }
  if ((input.length - 2) / 2 < 64) {
    throw new AuthcapError('validation_error', `signature is ${(input.length - 2) / 2} bytes; a wallet signature has at least 64`);
  }
  if (!isEcdsaSignature(input as Hex)) return input.toLowerCase() as Hex;
  const canonical = canonicalEcdsa(input as Hex);
  if (!canonical) {
    throw new AuthcapError('validation_error', 'signature is not a valid ECDSA signature: its v must be 27 or 28 (or 0/1) and s in range');
  }
  return canonical;
}

export function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
