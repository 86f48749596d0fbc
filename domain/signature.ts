// ECDSA signature bytes as the token will judge them. FiatToken (like OpenZeppelin's ECDSA) refuses
// a high-s signature, so its low-s twin, equally valid for the same signer and digest, is stored
// instead; an EIP-2098 compact (64-byte) signature is expanded to the 65 bytes every overload takes.
import { concatHex, hexToBigInt, numberToHex, sliceHex, type Hex } from 'viem';

/** secp256k1's group order n; a canonical signature has s ≤ n/2. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = SECP256K1_N / 2n;

export interface SplitSignature {
  r: Hex;
  s: Hex;
  v: 27 | 28;
}

/** Bytes length of a 0x-hex string. */
function byteLength(signature: Hex): number {
  return (signature.length - 2) / 2;
}

/** True for the 64/65-byte forms an EOA produces; longer ones are ERC-1271 wallet data, kept as is. */
export function isEcdsaSignature(signature: Hex): boolean {
  return byteLength(signature) === 64 || byteLength(signature) === 65;
}

/**
 * The canonical 65-byte form of an EOA signature: low s, v in {27, 28}. Returns undefined for bytes
 * that are not an ECDSA signature at all (v other than 0, 1, 27, 28).
 */
export function canonicalEcdsa(signature: Hex): Hex | undefined {
  const split = splitEcdsa(signature);
  if (!split) return undefined;
  return concatHex([split.r, split.s, numberToHex(split.v, { size: 1 })]);
}

/** r, s and v of a 64- or 65-byte signature, with s brought to the low half (v flipped to match). */
export function splitEcdsa(signature: Hex): SplitSignature | undefined {
  let r: Hex;
  let s: bigint;
  let yParity: number;
  if (byteLength(signature) === 65) {
    r = sliceHex(signature, 0, 32);
    s = hexToBigInt(sliceHex(signature, 32, 64));
    const v = Number(hexToBigInt(sliceHex(signature, 64, 65)));
    if (v === 0 || v === 1) yParity = v;
    else if (v === 27 || v === 28) yParity = v - 27;
    else return undefined;
  } else if (byteLength(signature) === 64) {
    // EIP-2098: the top bit of the second word is y parity, the rest is s.
    r = sliceHex(signature, 0, 32);
    const yParityAndS = hexToBigInt(sliceHex(signature, 32, 64));
    yParity = Number(yParityAndS >> 255n);
    s = yParityAndS & ((1n << 255n) - 1n);
  } else {
    return undefined;
  }
  if (s === 0n || s >= SECP256K1_N) return undefined;
  if (s > HALF_N) {
    s = SECP256K1_N - s;
    yParity ^= 1;
  }
  return { r, s: numberToHex(s, { size: 32 }), v: (27 + yParity) as 27 | 28 };
}

/** A signature a verifier cannot even parse (bad length, v or recovery): the caller's mistake, not a node failure. */
export function isSignatureFormatError(err: unknown): boolean {
  const name = (err as { name?: string })?.name ?? '';
  const message = (err as Error)?.message ?? '';
  return /Signature|InvalidLength|Hex|recovery|yParity/i.test(name) || /signature|invalid.*(length|size)|recovery/i.test(message);
}
