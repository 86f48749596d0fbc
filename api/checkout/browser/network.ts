// Which chain the wallet must be on to sign, how to name it to the payer, and what to give a wallet
// that does not know it (EIP-3085). Pure: no DOM, no wallet, so it is tested in Node.
import type { CheckoutSession } from '../sessionTypes.js';

export interface RequiredChain {
  chainId: number;
  /** CAIP-2, e.g. "eip155:8453"; null when the session does not name one. */
  id: string | null;
  name: string;
  rpcUrls: string[];
}

/** wallet_addEthereumChain's one parameter (EIP-3085). */
export interface AddChainParams {
  chainId: string;
  chainName: string;
  nativeCurrency: { name: string; symbol: string; decimals: number };
  rpcUrls: string[];
}

export const hexChainId = (chainId: number): string => `0x${chainId.toString(16)}`;

/**
 * The chain a signature must be made on. The signed domain's chain wins over the network's: it is
 * what the signature is bound to. Null when neither is known yet (nothing to sign then).
 */
export function requiredChain(s: Pick<CheckoutSession, 'network' | 'token'>): RequiredChain | null {
  const chainId = s.token.chainId ?? s.network?.chainId ?? null;
  if (chainId === null) return null;
  const network = s.network?.chainId === chainId ? s.network : null;
  return { chainId, id: network?.id ?? null, name: network?.name ?? `chain ${chainId}`, rpcUrls: network?.rpcUrls ?? [] };
}

/** Whether the wallet's chain is the one to sign on: only then may the page ask for a signature. */
export function onRequiredChain(walletChainId: number, required: RequiredChain | null): boolean {
  return required === null || walletChainId === required.chainId;
}

/** A name the deployment gave, not one made up from the id. */
export const hasOwnName = (required: RequiredChain): boolean => required.name !== required.id && required.name !== `chain ${required.chainId}`;

/** "chain 31338 (Dev chain 2)": the number a wallet shows, and the name when the deployment gives one. */
export function chainLabel(required: RequiredChain): string {
  return hasOwnName(required) ? `chain ${required.chainId} (${required.name})` : `chain ${required.chainId}`;
}

/**
 * What to hand a wallet that does not know the chain; null without public RPC URLs (a provider's
 * keyed URL is never given out, so the payer must add the network themselves). The gas token is
 * ETH: the catalog does not carry one, and the dev chains and the L2s served use ETH.
 */
export function addChainParams(required: RequiredChain): AddChainParams | null {
  if (required.rpcUrls.length === 0) return null;
  return {
    chainId: hexChainId(required.chainId),
    chainName: required.name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: [...required.rpcUrls],
  };
}

/** "chain 31338 (Dev chain 2, eip155:31338)": everything the payer may need to find it in the wallet. */
export function describeChain(required: RequiredChain): string {
  const extra = [hasOwnName(required) ? required.name : null, required.id].filter((part): part is string => Boolean(part));
  return extra.length ? `chain ${required.chainId} (${extra.join(', ')})` : `chain ${required.chainId}`;
}
