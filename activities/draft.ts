import { randomBytes } from 'node:crypto';
import { toHex, type Address, type Hex } from 'viem';
import type { DraftResult } from '../domain/activityContract.js';
import type { AuthorizationPrimaryType } from '../domain/eip3009.js';
import { readTokenDomain } from './tokenDomain.js';
import { nonceSearchKey } from './nonceKey.js';
import type { ChainContext } from './chainContext.js';
import { workerPolicyOf } from './workerPolicy.js';
import { holdTerms } from '../domain/hold.js';
import { holdAuthorizationMessage, paymentInfoHash } from '../domain/escrow.js';
import { toWire } from '../domain/escrowCall.js';
import { AuthcapError } from '../domain/errors.js';

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
    hold?: { authorizationId: string };
  }): Promise<DraftResult> {
    const [domain, head] = await Promise.all([readTokenDomain(ctx), ctx.publicClient.getBlockNumber({ cacheTime: 0 })]);
    const issuedAt = now();
    // A merchant may ask for a shorter window than the configured one, never a longer one.
    const validFor = Math.min(request.validForSeconds ?? ctx.validitySeconds, ctx.validitySeconds);
    if (request.hold) return draftHold(request as typeof request & { hold: { authorizationId: string } }, { domain, head, issuedAt, validFor });
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

  /**
   * A hold's typed data: the collector's ReceiveWithAuthorization of terms made for this authorization
   * (domain/hold.ts): the merchant key next in turn operates it and is paid, the payer may sign until
   * the draft's window ends, and the nonce is the terms' hash, so the signature authorizes them alone.
   */
  function draftHold(
    request: { payer: Address; value: string; hold: { authorizationId: string } },
    read: { domain: DraftResult['domain']; head: bigint; issuedAt: number; validFor: number },
  ): DraftResult {
    if (!ctx.escrow) throw new AuthcapError('holds_not_available', `${ctx.network} has no escrow configured: its authorizations cannot hold funds`);
    const operator = ctx.nextMerchant();
    const terms = holdTerms({
      operator,
      receiver: operator,
      payer: request.payer,
      token: ctx.tokenAddress,
      amount: BigInt(request.value),
      authorizeBy: read.issuedAt + read.validFor,
      authorizationId: request.hold.authorizationId,
    });
    const authorization = holdAuthorizationMessage(terms, ctx.chainId, ctx.escrow);
    return {
      domain: read.domain,
      fromBlock: read.head.toString(),
      nonceKey: nonceSearchKey(request.payer, authorization.nonce, ctx.nonceScope),
      policy: workerPolicyOf(ctx),
      authorization,
      hold: { terms: toWire(terms), paymentInfoHash: paymentInfoHash(terms, ctx.chainId, ctx.escrow.escrow) },
    };
  }
}
