import type { Hex } from 'viem';
import type { AuthorizationMessage, AuthorizationPrimaryType, TokenDomain } from '../domain/eip3009.js';
import type { SignatureCheck } from '../domain/facts.js';
import type { ChainContext } from './chainContext.js';
import { readTokenDomain, sameDomain } from './tokenDomain.js';
import { createVerifyActivity } from './verify.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import { nonceSearchKey } from './nonceKey.js';
import { workerPolicyOf } from './workerPolicy.js';
import type { WorkerPolicy } from '../domain/activityContract.js';
import { isDraftNonce, type DraftNonceKeys } from './draftNonce.js';
import { paymentInfoHash } from '../domain/escrow.js';
import { fromWire, type WirePaymentInfo } from '../domain/escrowCall.js';
import { presignedHoldRefusal } from '../domain/hold.js';

export function createPresignedActivity(ctx: ChainContext, draftNonceKeys: DraftNonceKeys, now: () => number = () => Math.floor(Date.now() / 1000)) {
  const verify = createVerifyActivity(ctx);
  const heldTerms = (paymentInfo: WirePaymentInfo) => ({
    terms: paymentInfo,
    paymentInfoHash: paymentInfoHash(fromWire(paymentInfo), ctx.chainId, ctx.escrow!.escrow),
  });
  return async function checkPresignedAuthorization(request: {
    primaryType: AuthorizationPrimaryType;
    authorization: AuthorizationMessage;
    signature: Hex;
    domain?: TokenDomain;
    hold?: { paymentInfo: WirePaymentInfo };
  }): Promise<{
    domain: TokenDomain;
    check: SignatureCheck;
    fromBlock: string;
    nonceKey: string;
    policy: WorkerPolicy;
    hold?: { terms: WirePaymentInfo; paymentInfoHash: Hex };
  }> {
    const { from, nonce, validBefore } = request.authorization;
    const [domain, head, consumed] = await Promise.all([
      readTokenDomain(ctx),
      ctx.publicClient.getBlockNumber({ cacheTime: 0 }),
      ctx.publicClient.readContract({ address: ctx.tokenAddress, abi: tokenAbi, functionName: 'authorizationState', args: [from, nonce], blockTag: 'pending' }),
    ]);
    const fromBlock = head.toString();
    const nonceKey = nonceSearchKey(from, nonce, ctx.nonceScope);
    const policy = workerPolicyOf(ctx);
    const refuse = (code: SignatureCheck['code'], reason: string) => ({ domain, fromBlock, nonceKey, policy, check: { valid: false, code, reason } });
    if (request.domain && !sameDomain(request.domain, domain)) {
      return refuse(
        'domain_mismatch',
        `signed for ${request.domain.name} v${request.domain.version} on chain ${request.domain.chainId} at ${request.domain.verifyingContract}; ` +
          `this merchant takes ${domain.name} v${domain.version} on chain ${domain.chainId} at ${domain.verifyingContract}`,
      );
    }
    // A pre-signed hold: the collector's authorization of terms this merchant can operate.
    const hold = request.hold ? heldTerms(request.hold.paymentInfo) : undefined;
    if (request.hold) {
      if (!ctx.escrow) return refuse('holds_not_available', `${ctx.network} has no escrow configured: its authorizations cannot hold funds`);
      const refusal = presignedHoldRefusal(fromWire(request.hold.paymentInfo), request.authorization, request.primaryType, {
        isMerchant: (a) => ctx.isMerchant(a),
        token: ctx.tokenAddress,
        chainId: ctx.chainId,
        escrow: ctx.escrow,
        nowSeconds: now(),
      });
      if (refusal) return refuse(refusal.code, refusal.reason);
    } else if (!ctx.isMerchant(request.authorization.to)) {
      return refuse('recipient_mismatch', `the authorization pays ${request.authorization.to}, not this merchant (${ctx.merchants.join(', ')})`);
    }
    if (BigInt(validBefore) <= BigInt(now())) {
      return refuse('authorization_expired', `validBefore ${validBefore} has already passed`);
    }
    if (BigInt(validBefore) > BigInt(now() + ctx.maxValiditySeconds)) {
      return refuse('validity_too_long', `validBefore ${validBefore} is more than ${ctx.maxValiditySeconds} s away; ask the payer for a shorter window`);
    }
    // A nonce authcap drafted: the payer signed it for that draft's order, which alone may use it.
    if (isDraftNonce(draftNonceKeys, nonce)) {
      return refuse('nonce_already_held', 'this signed authorization was drafted by authcap for another order: submit its signature to that authorization');
    }
    // Already used or canceled onchain: it can never pay this order (and must not mark it paid).
    if (consumed) return refuse('nonce_already_used', `the nonce ${nonce} of ${from} is already used or canceled onchain`);
    return {
      domain,
      fromBlock,
      nonceKey,
      policy,
      ...(hold ? { hold } : {}),
      check: await verify({ domain, primaryType: request.primaryType, authorization: request.authorization, signature: request.signature }),
    };
  };
}
