import { randomBytes } from 'node:crypto';
import { toHex, type Address, type Hex } from 'viem';
import type { DraftResult } from '../domain/activityContract.js';
import type { AuthorizationPrimaryType } from '../domain/eip3009.js';
import { readTokenDomain } from './tokenDomain.js';
import { nonceSearchKey } from './nonceKey.js';
import type { ChainContext } from './chainContext.js';
import { workerPolicyOf } from './workerPolicy.js';

/** The spec's window: valid from a minute before signing, for the configured validity after it. */
export const VALID_AFTER_SKEW_SECONDS = 60;

export function createDraftActivity(ctx: ChainContext, deps: { now?: () => number; randomNonce?: () => Hex } = {}) {
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  const randomNonce = deps.randomNonce ?? (() => toHex(randomBytes(32)));

  return async function draftAuthorization(request: {
    payer: Address;
    value: string;
    primaryType: AuthorizationPrimaryType;
    validForSeconds?: number;
  }): Promise<DraftResult> {
    const [domain, head] = await Promise.all([readTokenDomain(ctx), ctx.publicClient.getBlockNumber({ cacheTime: 0 })]);
    const issuedAt = now();
    // A merchant may ask for a shorter window than the configured one, never a longer one.
    const validFor = Math.min(request.validForSeconds ?? ctx.validitySeconds, ctx.validitySeconds);
    const nonce = randomNonce();
    return {
      domain,
      fromBlock: head.toString(),
      nonceKey: nonceSearchKey(request.payer, nonce, ctx.nonceScope),
      policy: workerPolicyOf(ctx),
      authorization: {
        from: request.payer,
        to: ctx.nextMerchant(),
        value: request.value,
        validAfter: String(issuedAt - VALID_AFTER_SKEW_SECONDS),
        validBefore: String(issuedAt + validFor),
        // 32 random bytes from the OS, generated here because workflow code must stay deterministic.
        nonce,
      },
    };
  };
}
