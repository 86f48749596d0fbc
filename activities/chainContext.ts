// The chain-side dependencies every activity receives: clients, the token, the merchant key, policy.
import {
  createPublicClient, createWalletClient, defineChain, http,
  type Account, type Address, type Chain, type Hex, type PublicClient, type Transport, type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { MerchantRelayer } from './relayer.js';

export interface ChainConfig {
  rpcUrl: string;
  tokenAddress: Address;
  merchantPrivateKey: Hex;
  /** Seconds from drafting to validBefore (AUTHCAP_VALIDITY_SECONDS, default 900). */
  validitySeconds: number;
  /** Blocks on top of the capture's block before it counts as final (AUTHCAP_CONFIRMATIONS, default 1). */
  confirmations: number;
  /** How often waits poll the node, in ms. */
  pollingIntervalMs?: number;
  /** How often open authorizations re-read the chain for outside consumption (AUTHCAP_RECONCILE_SECONDS). */
  reconcileIntervalSeconds?: number;
}

export interface ChainContext {
  publicClient: PublicClient<Transport, Chain>;
  walletClient: WalletClient<Transport, Chain, Account>;
  merchant: Address;
  tokenAddress: Address;
  validitySeconds: number;
  confirmations: number;
  pollingIntervalMs: number;
  reconcileIntervalSeconds: number;
  relayer: MerchantRelayer;
}

export async function createChainContext(config: ChainConfig): Promise<ChainContext> {
  const probe = createPublicClient({ transport: http(config.rpcUrl) });
  const chainId = await probe.getChainId();
  const chain = defineChain({
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [config.rpcUrl] } },
  });
  const pollingIntervalMs = config.pollingIntervalMs ?? 200;
  const transport = http(config.rpcUrl, { retryCount: 0 });
  const account = privateKeyToAccount(config.merchantPrivateKey);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: pollingIntervalMs });
  const walletClient = createWalletClient({ chain, transport, account });
  return {
    publicClient,
    walletClient,
    merchant: account.address,
    tokenAddress: config.tokenAddress,
    validitySeconds: config.validitySeconds,
    confirmations: config.confirmations,
    pollingIntervalMs,
    reconcileIntervalSeconds: config.reconcileIntervalSeconds ?? 15,
    relayer: new MerchantRelayer(publicClient, walletClient),
  };
}
