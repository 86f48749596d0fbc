import type { Hex } from 'viem';
import { sameAddress } from '../domain/address.js';
import type { AuthorizationMessage, AuthorizationPrimaryType, TokenDomain } from '../domain/eip3009.js';
import type { SignatureCheck } from '../domain/facts.js';
import type { ChainContext } from './chainContext.js';
import { readTokenDomain, sameDomain } from './tokenDomain.js';
import { createVerifyActivity } from './verify.js';

export function createPresignedActivity(ctx: ChainContext, now: () => number = () => Math.floor(Date.now() / 1000)) {
  const verify = createVerifyActivity(ctx);
  return async function checkPresignedAuthorization(request: {
    primaryType: AuthorizationPrimaryType;
    authorization: AuthorizationMessage;
    signature: Hex;
    domain?: TokenDomain;
  }): Promise<{ domain: TokenDomain; check: SignatureCheck }> {
    const domain = await readTokenDomain(ctx);
    const refuse = (code: SignatureCheck['code'], reason: string) => ({ domain, check: { valid: false, code, reason } });
    if (request.domain && !sameDomain(request.domain, domain)) {
      return refuse('domain_mismatch',
        `signed for ${request.domain.name} v${request.domain.version} on chain ${request.domain.chainId} at ${request.domain.verifyingContract}; ` +
        `this merchant takes ${domain.name} v${domain.version} on chain ${domain.chainId} at ${domain.verifyingContract}`);
    }
    if (!sameAddress(request.authorization.to, ctx.merchant)) {
      return refuse('recipient_mismatch', `the authorization pays ${request.authorization.to}, not this merchant (${ctx.merchant})`);
    }
    if (BigInt(request.authorization.validBefore) <= BigInt(now())) {
      return refuse('authorization_expired', `validBefore ${request.authorization.validBefore} has already passed`);
    }
    return { domain, check: await verify({ domain, primaryType: request.primaryType, authorization: request.authorization, signature: request.signature }) };
  };
}
