// The injected wallet through EIP-1193 only: accounts, chain, switching (or adding) a chain, eth_signTypedData_v4.
// No library: the page must stay small and must not depend on how a wallet is implemented.
import type { Eip1193Provider } from './dom.js';
import type { TypedDataJson } from '../sessionTypes.js';
import { hexChainId, type AddChainParams } from './network.js';

/** EIP-1193: the user rejected the request. */
export const USER_REJECTED = 4001;
/** EIP-3326: the wallet does not know the chain asked for. */
export const UNRECOGNIZED_CHAIN = 4902;

export interface WalletFailure {
  code: number | undefined;
  message: string;
}

/** Wallets throw objects of many shapes; the code and message are all a page can rely on. */
export function walletFailure(err: unknown): WalletFailure {
  const e = (err ?? {}) as { code?: unknown; message?: unknown; data?: { originalError?: { code?: unknown } } };
  const code = typeof e.code === 'number' ? e.code : typeof e.data?.originalError?.code === 'number' ? e.data.originalError.code : undefined;
  return { code, message: typeof e.message === 'string' && e.message ? e.message : 'the wallet failed without saying why' };
}

/** The accounts the wallet shares: eth_requestAccounts may prompt the payer, eth_accounts never does. */
export async function accountsOf(wallet: Eip1193Provider, prompt: boolean): Promise<string[]> {
  const accounts = await wallet.request({ method: prompt ? 'eth_requestAccounts' : 'eth_accounts' });
  return Array.isArray(accounts) ? accounts.filter((a): a is string => typeof a === 'string') : [];
}

export async function chainIdOf(wallet: Eip1193Provider): Promise<number> {
  const answer = await wallet.request({ method: 'eth_chainId' });
  return typeof answer === 'string' ? Number.parseInt(answer, 16) : Number(answer);
}

export async function switchChain(wallet: Eip1193Provider, chainId: number): Promise<void> {
  await wallet.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: hexChainId(chainId) }] });
}

/** EIP-3085: asks the wallet to add the chain (most wallets offer to switch to it too; the page still switches after). */
export async function addChain(wallet: Eip1193Provider, params: AddChainParams): Promise<void> {
  await wallet.request({ method: 'wallet_addEthereumChain', params: [params] });
}

/** eth_signTypedData_v4 with the payload exactly as the API built it (as JSON text, as MetaMask expects). */
export async function signTypedData(wallet: Eip1193Provider, account: string, typedData: TypedDataJson): Promise<string> {
  const signature = await wallet.request({ method: 'eth_signTypedData_v4', params: [account, JSON.stringify(typedData)] });
  if (typeof signature !== 'string' || !/^0x[0-9a-fA-F]+$/.test(signature)) throw new Error('the wallet returned something that is not a signature');
  return signature;
}

/** Calls `listener` when the payer switches account or chain in the wallet; returns the unsubscribe. */
export function onWalletChange(wallet: Eip1193Provider, listener: () => void): () => void {
  const handler = () => listener();
  wallet.on?.('accountsChanged', handler);
  wallet.on?.('chainChanged', handler);
  return () => {
    wallet.removeListener?.('accountsChanged', handler);
    wallet.removeListener?.('chainChanged', handler);
  };
}
