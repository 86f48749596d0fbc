// The payer's view of an authorization for the checkout pages: who is paid, how much of which token
// on which network, the window, the state, and the typed data to sign. Built from the resource; the
// token's symbol and decimals come from the resource, else the deployment's catalog, else the chain
// (read once per token and kept: a deployment without configuration).
import { createPublicClient, http, type Address, type PublicClient } from 'viem';
import type { AuthorizationResource, HoldView } from '../../domain/authorization.js';
import { AuthcapError } from '../../domain/errors.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import type { Catalog, ServedNetwork } from '../../runtime/deployment/catalog.js';
import { chainIdOfNetwork, networkOfChainId } from '../../runtime/deployment/schema.js';
import type { CheckoutHold, CheckoutNetwork, CheckoutSession, TypedDataJson } from './sessionTypes.js';

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
  /** The deployment's networks and tokens; absent for an API without configuration. */
  catalog?: Catalog;
  now?: () => number;
}

/**
 * The served network an authorization is on: named by it, else by its signed chain, else the deployment's
 * first. One started by a client given no deployment names no network (the worker put it on its first),
 * and the answers of sign, cancel and void carry the workflow's view as it is.
 */
function servedNetworkOf(resource: AuthorizationResource, catalog: Catalog | undefined): ServedNetwork | undefined {
  if (!catalog) return undefined;
  if (resource.network) return catalog.network(resource.network);
  if (resource.domain) return catalog.networks.find((n) => n.chainId === resource.domain!.chainId);
  return catalog.network(catalog.defaultRef.network);
}

/** What the page tells the wallet of the network; without a catalog entry, what the resource itself says. */
export function checkoutNetwork(resource: AuthorizationResource, served: ServedNetwork | undefined): CheckoutNetwork | null {
  if (served) return { id: served.network, chainId: served.chainId, name: served.name, rpcUrls: [...(served.publicRpcUrls ?? [])] };
  const id = resource.network ?? (resource.domain ? networkOfChainId(resource.domain.chainId) : undefined);
  if (!id) return null;
  return { id, chainId: resource.domain?.chainId ?? chainIdOfNetwork(id), name: id, rpcUrls: [] };
}

async function tokenInfo(resource: AuthorizationResource, served: ServedNetwork | undefined, context: SessionContext): Promise<TokenInfo> {
  if (resource.token) return { symbol: resource.token.symbol, decimals: resource.token.decimals };
  const address = resource.domain?.verifyingContract;
  if (!address) return { symbol: '', decimals: 6 };
  const known = served && context.catalog?.tokenOf({ network: served.network, token: address });
  return known ? { symbol: known.symbol, decimals: known.decimals } : context.tokens.get(address);
}

export async function checkoutSession(resource: AuthorizationResource, context: SessionContext): Promise<CheckoutSession> {
  const { authorization, domain } = resource;
  const served = servedNetworkOf(resource, context.catalog);
  const info = await tokenInfo(resource, served, context);
  const last = resource.history.at(-1);
  return {
    id: resource.id,
    orderId: resource.orderId,
    state: resource.state,
    payer: authorization?.from ?? null,
    // A hold is signed to the escrow's collector: the merchant is the hold's receiver.
    merchant: { address: (resource.hold ? resource.hold.terms.receiver : authorization?.to) ?? null, name: context.merchantName },
    network: checkoutNetwork(resource, served),
    token: {
      address: domain?.verifyingContract ?? resource.token?.address ?? null,
      symbol: info.symbol,
      decimals: info.decimals,
      chainId: domain?.chainId ?? null,
    },
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
    hold: resource.hold ? checkoutHold(resource, resource.hold, info.decimals) : null,
    updatedAt: last?.at ?? null,
    lastError: resource.lastError ? { code: resource.lastError.code, message: resource.lastError.message } : null,
  };
}

/** What the payer is told of a hold: amounts in minor units, the capture window's end in unix seconds. */
function checkoutHold(resource: AuthorizationResource, hold: HoldView, decimals: number): CheckoutHold {
  return {
    amountHeldMinor: minorOf(hold.amountHeld, decimals),
    capturedMinor: minorOf(resource.amountCaptured, decimals),
    captureBefore: String(Math.floor(Date.parse(hold.captureBefore) / 1000)),
    release: hold.release
      ? { kind: hold.release.kind, amountMinor: minorOf(hold.release.amount, decimals), transactionHash: hold.release.transactionHash, at: hold.release.at }
      : null,
    collector: resource.authorization?.to ?? null,
  };
}

/** A decimal amount ("15.5") in the token's smallest unit, for the page to format like the others. */
function minorOf(decimal: string, decimals: number): string {
  const [whole = '0', fraction = ''] = decimal.split('.');
  return (BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0').slice(0, decimals) || '0')).toString();
}
