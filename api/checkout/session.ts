// The payer's view of an authorization for the checkout pages: who is paid, how much of which token,
// the window, the state, and the typed data to sign. Built from the resource; the token's symbol and
// decimals are read from the chain once per token and kept.
import { createPublicClient, http, type Address, type PublicClient } from 'viem';
import type { AuthorizationResource } from '../../domain/authorization.js';
import { AuthcapError } from '../../domain/errors.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import type { CheckoutSession, TypedDataJson } from './sessionTypes.js';

export interface TokenInfo {
  symbol: string;
  decimals: number;
}

/** symbol() and decimals() per token, read once: they never change for a deployed token. */
export class TokenInfoCache {
  private readonly known = new Map<string, Promise<TokenInfo>>();
  private readonly chain: PublicClient | undefined;

  constructor(rpcUrl: string | undefined) {
    this.chain = rpcUrl ? createPublicClient({ transport: http(rpcUrl, { timeout: 5_000, retryCount: 1 }) }) : undefined;
  }

  get(token: Address): Promise<TokenInfo> {
    const key = token.toLowerCase();
    let info = this.known.get(key);
    if (!info) {
      info = this.read(token);
      this.known.set(key, info);
      // A failed read is not kept: the page retries and the next request asks the node again.
      info.catch(() => this.known.delete(key));
    }
    return info;
  }

  private async read(token: Address): Promise<TokenInfo> {
    // Without a node (an API embedded with no rpcUrl) the spec's token is assumed: 6 decimals.
    if (!this.chain) return { symbol: 'USDC', decimals: 6 };
    try {
      const [symbol, decimals] = await Promise.all([
        this.chain.readContract({ address: token, abi: tokenAbi, functionName: 'symbol' }),
        this.chain.readContract({ address: token, abi: tokenAbi, functionName: 'decimals' }),
      ]);
      return { symbol, decimals };
    } catch (err) {
      throw new AuthcapError('chain_unavailable', `could not read the token's symbol and decimals: ${(err as Error).message.split('\n')[0]}`);
    }
  }
}

export interface SessionContext {
  merchantName: string;
  tokens: TokenInfoCache;
  now?: () => number;
}

export async function checkoutSession(resource: AuthorizationResource, context: SessionContext): Promise<CheckoutSession> {
  const { authorization, domain } = resource;
  const info = domain ? await context.tokens.get(domain.verifyingContract) : { symbol: '', decimals: 6 };
  const last = resource.history.at(-1);
  return {
    id: resource.id,
    orderId: resource.orderId,
    state: resource.state,
    payer: authorization?.from ?? null,
    merchant: { address: authorization?.to ?? null, name: context.merchantName },
    token: { address: domain?.verifyingContract ?? null, symbol: info.symbol, decimals: info.decimals, chainId: domain?.chainId ?? null },
    amountMinor: authorization?.value ?? null,
    validAfter: authorization?.validAfter ?? null,
    validBefore: authorization?.validBefore ?? null,
    now: Math.floor((context.now ?? Date.now)() / 1000),
    // Each payload only while it can still be used: signing is for a draft, cancelling for a stored one.
    typedData: resource.state === 'drafted' ? (resource.typedData as TypedDataJson | null) : null,
    cancellationTypedData: resource.state === 'stored' ? (resource.cancellationTypedData as TypedDataJson | null) : null,
    capture: resource.capture
      ? {
          transactionHash: resource.capture.transactionHash,
          confirmedAt: resource.capture.confirmedAt,
          keptMinor: resource.state === 'captured' && resource.capture.amount !== undefined ? minorOf(resource.capture.amount, info.decimals) : null,
        }
      : null,
    cancellation: resource.cancellation ? { transactionHash: resource.cancellation.transactionHash, at: resource.cancellation.at } : null,
    updatedAt: last?.at ?? null,
    lastError: resource.lastError ? { code: resource.lastError.code, message: resource.lastError.message } : null,
  };
}

/** A decimal amount ("15.5") in the token's smallest unit, for the page to format like the others. */
function minorOf(decimal: string, decimals: number): string {
  const [whole = '0', fraction = ''] = decimal.split('.');
  return (BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0').slice(0, decimals) || '0')).toString();
}
