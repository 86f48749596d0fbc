// secp256k1 for the Node processes (API, worker activities, relayer) in WebAssembly libsecp256k1
// (tiny-secp256k1) rather than viem's JavaScript curve: a signer recovered in ~0.5 ms instead of
// ~2.6, a transaction signed in ~0.13 instead of ~0.45, on every payment. Same answers: libsecp256k1
// signs with RFC 6979 and low s as viem does (test/unit/runtime/secp256k1.test.ts compares them).
// Workflow code cannot load WebAssembly from a file: it keeps domain/signatureRecovery.ts.
import * as curve from 'tiny-secp256k1';
import { hexToBytes, keccak256, serializeTransaction, toHex, type Address, type Hex, type LocalAccount, type SerializeTransactionFn } from 'viem';
import { privateKeyToAccount, publicKeyToAddress } from 'viem/accounts';
import { splitEcdsa } from '../domain/signature.js';
import { isPlainEcdsaForm } from '../domain/signatureRecovery.js';

/**
 * The address whose key made this ECDSA signature (65 bytes, or 64 in EIP-2098 form; high s read
 * as its low-s twin) over `digest`, or undefined when it is no ECDSA signature of any key.
 */
export function recoverAddress(digest: Hex, signature: Hex): Address | undefined {
  try {
    const split = splitEcdsa(signature);
    if (!split) return undefined;
    const compact = hexToBytes(`${split.r}${split.s.slice(2)}`);
    const publicKey = curve.recover(hexToBytes(digest), compact, (split.v - 27) as 0 | 1, false);
    return publicKey ? publicKeyToAddress(toHex(publicKey)) : undefined;
  } catch {
    // Not hex, r out of range, no point with this x: not a signature of any key.
    return undefined;
  }
}

/** Whether `signature` is `signer`'s own ECDSA signature over `digest` (addresses compared case-insensitively). */
export function isSignatureOf(digest: Hex, signature: Hex, signer: Address): boolean {
  return recoverAddress(digest, signature)?.toLowerCase() === signer.toLowerCase();
}

/**
 * domain/signatureRecovery.ts's `isEcdsaSignatureOf` on this curve: the payer's own signature in the
 * 65-byte form the workflow's validator judges, so the API never calls a signature the payer's that
 * the workflow would not.
 */
export function isPayerKeySignatureOf(digest: Hex, signature: Hex, signer: Address): boolean {
  return isPlainEcdsaForm(signature) && isSignatureOf(digest, signature, signer);
}

/** The (r, s, yParity) signature of `hash` by `privateKey`: deterministic (RFC 6979), low s. */
export function signHash(hash: Hex, privateKey: Hex): { r: Hex; s: Hex; v: bigint; yParity: 0 | 1 } {
  const { signature, recoveryId } = curve.signRecoverable(hexToBytes(hash), hexToBytes(privateKey));
  const yParity = recoveryId as 0 | 1;
  return { r: toHex(signature.subarray(0, 32)), s: toHex(signature.subarray(32, 64)), v: yParity ? 28n : 27n, yParity };
}

/**
 * viem's local account for `privateKey`, whose transactions (and raw hashes) are signed by
 * libsecp256k1: the merchant's relayer signs one transaction per capture and refund.
 */
export function localAccount(privateKey: Hex): LocalAccount {
  const account = privateKeyToAccount(privateKey);
  return {
    ...account,
    async sign({ hash }) {
      const { r, s, yParity } = signHash(hash, privateKey);
      return `${r}${s.slice(2)}${yParity ? '1c' : '1b'}` as Hex;
    },
    async signTransaction(transaction, options) {
      const serializer = (options?.serializer ?? serializeTransaction) as SerializeTransactionFn<typeof transaction>;
      // Blob sidecars are not part of what is signed (viem's own signTransaction does the same).
      const signable = transaction.type === 'eip4844' ? { ...transaction, sidecars: false as const } : transaction;
      const signature = signHash(keccak256(await serializer(signable)), privateKey);
      return serializer(transaction, signature);
    },
  };
}
