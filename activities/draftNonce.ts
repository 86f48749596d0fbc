// The nonces authcap drafts carry a keyed tag: 16 random bytes, then the first 16 bytes of an
// HMAC-SHA256 of them under a key every worker holds. One signed payment pays one order: a payer's
// signature over a draft could otherwise be posted again as a pre-signed authorization for another
// order. The pre-signed path recognises the tag and refuses the payload, so a draft needs no claim
// of its own (a workflow per draft, before). Only pre-signed payloads, whose nonces authcap did not
// choose, are claimed. A random nonce bears a valid tag with probability 2^-128.
import { createHmac, randomBytes } from 'node:crypto';
import { toHex, type Hex } from 'viem';

/** Keys to tag with: the first tags new drafts, every one recognises a tag (rotation keeps the old ones). */
export type DraftNonceKeys = readonly Buffer[];

const RANDOM_BYTES = 16;

function tagOf(key: Buffer, random: Buffer): Buffer {
  return createHmac('sha256', key)
    .update('authcap:draft-nonce:')
    .update(random)
    .digest()
    .subarray(0, 32 - RANDOM_BYTES);
}

export function draftNonce(keys: DraftNonceKeys): Hex {
  const random = randomBytes(RANDOM_BYTES);
  return toHex(Buffer.concat([random, tagOf(keys[0]!, random)]));
}

/** True when authcap drafted this nonce (under any of the keys): its signed payload belongs to that draft's order. */
export function isDraftNonce(keys: DraftNonceKeys, nonce: Hex): boolean {
  const bytes = Buffer.from(nonce.slice(2), 'hex');
  if (bytes.length !== 32) return false;
  const random = bytes.subarray(0, RANDOM_BYTES);
  const tag = bytes.subarray(RANDOM_BYTES);
  return keys.some((key) => tagOf(key, random).equals(tag));
}
