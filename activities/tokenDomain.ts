import type { TokenDomain } from '../domain/eip3009.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';

const cache = new WeakMap<ChainContext, Promise<TokenDomain>>();

/**
 * The token's EIP-712 domain, read with eth_call (name and version differ per deployment, so they
 * are never assumed). Read once per worker: a token's domain does not change under a fixed address.
 */
export function readTokenDomain(ctx: ChainContext): Promise<TokenDomain> {
  let domain = cache.get(ctx);
  if (!domain) {
    const token = { address: ctx.tokenAddress, abi: tokenAbi } as const;
    domain = Promise.all([
      ctx.publicClient.readContract({ ...token, functionName: 'name' }),
      ctx.publicClient.readContract({ ...token, functionName: 'version' }),
      ctx.publicClient.getChainId(),
    ]).then(([name, version, chainId]) => ({ name, version, chainId, verifyingContract: ctx.tokenAddress }));
    domain.catch(() => cache.delete(ctx));
    cache.set(ctx, domain);
  }
  return domain;
}

export function sameDomain(a: TokenDomain, b: TokenDomain): boolean {
  return (
    a.name === b.name &&
    a.version === b.version &&
    Number(a.chainId) === Number(b.chainId) &&
    a.verifyingContract.toLowerCase() === b.verifyingContract.toLowerCase()
  );
}
