// The update validators' look at a payer's signature, before the update is accepted into history.
// The payer's own plain ECDSA signature always passes: nobody can lock a payer out of their own
// authorization. Anything else (a stranger's key, a contract wallet's signature) can only be judged
// by the chain, so it passes while the attempt budget lasts, and is refused without a trace after.
import type { Hex } from 'viem';
import { authorizationDigest, cancelDigest, isEcdsaSignatureOf } from '../domain/signatureRecovery.js';
import { failure } from './procedures.js';
import type { Lifecycle } from './lifecycle.js';

const SIGNATURE = /^0x[0-9a-fA-F]{2,8192}$/;

export function screenSignature(lifecycle: Lifecycle, kind: 'signature' | 'cancel', request: unknown): void {
  const signature = (request as { signature?: unknown } | undefined)?.signature;
  if (typeof signature !== 'string' || !SIGNATURE.test(signature) || signature.length % 2 !== 0) {
    throw failure('validation_error', 'signature must be 0x-prefixed hex bytes');
  }
  const { domain, authorization, primaryType } = lifecycle.context;
  // assertCan ran first: a draft exists. Without one there is nothing to screen against.
  if (!domain || !authorization) return;
  const digest = kind === 'signature'
    ? authorizationDigest(domain, primaryType, authorization)
    : cancelDigest(domain, authorization.from, authorization.nonce);
  if (isEcdsaSignatureOf(digest, signature as Hex, authorization.from)) return;
  lifecycle.assertWithinBudget(kind);
}
