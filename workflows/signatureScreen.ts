// The update validators' look at a payer's signature, before the update is accepted into history.
// While the attempt budget lasts, any well-formed signature is accepted and the chain judges it (the
// verify activity); a failure counts against the budget. Once the budget is spent, only the payer's
// own plain ECDSA signature passes, and anything else is refused without a trace. A contract
// wallet's signature that the (authenticated) caller had the chain accept before sending it counts
// against a budget of its own (client/signatureCheck.ts): strangers, refused by the caller, never
// reach it, so nobody can lock a payer out, EOA or contract wallet.
import type { Hex } from 'viem';
import { failure } from './failures.js';
import type { Lifecycle } from './lifecycle.js';
import { loadedSignerRecovery } from './signerRecovery.js';
import { signatureAttemptKind } from './attemptBudget.js';

const SIGNATURE = /^0x[0-9a-fA-F]{2,8192}$/;

export function screenSignature(lifecycle: Lifecycle, kind: 'signature' | 'cancel', request: unknown): void {
  const signature = (request as { signature?: unknown } | undefined)?.signature;
  if (typeof signature !== 'string' || !SIGNATURE.test(signature) || signature.length % 2 !== 0) {
    throw failure('validation_error', 'signature must be 0x-prefixed hex bytes');
  }
  const budget = signatureAttemptKind(kind, request);
  if (lifecycle.isWithinBudget(budget)) return;
  const { domain, authorization, primaryType } = lifecycle.context;
  // assertCan ran first: a draft exists. Without one there is nothing to screen against.
  if (!domain || !authorization) return;
  // Loaded since the first failure (Lifecycle.recordFailedAttempt). Only in the first task of a run
  // continued with a spent budget can it still be loading: that one attempt is let through to the
  // chain rather than risk refusing the payer's own signature.
  const recovery = loadedSignerRecovery();
  if (!recovery) return;
  const digest =
    kind === 'signature'
      ? recovery.authorizationDigest(domain, primaryType, authorization)
      : recovery.cancelDigest(domain, authorization.from, authorization.nonce);
  if (recovery.isEcdsaSignatureOf(digest, signature as Hex, authorization.from)) return;
  lifecycle.assertWithinBudget(budget);
}
