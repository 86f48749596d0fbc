// The chain-side dependencies every activity receives: clients, the token, the merchant key, policy.
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  fallback,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { localAccount } from '../runtime/secp256k1.js';
import { HeadFeed } from './rpc/headFeed.js';
import { LogReader } from './rpc/logReader.js';
import { RpcMetrics, instrumentedHttp } from './rpc/rpcMetrics.js';
import { FollowedNonces } from './followedNonces.js';
import { nonceScopeOf } from './nonceKey.js';
import type { EscrowAddresses } from '../domain/escrow.js';

export interface ChainConfig {
  rpcUrl: string;
  tokenAddress: Address;
  merchantPrivateKey: Hex;
  /**
   * More merchant keys (MERCHANT_PRIVATE_KEYS): each gets its own relayer, and new authorizations are
   * spread over all of them, so captures per second grow with keys. Each key is also a payee.
   */
  merchantPrivateKeys?: Hex[];
  /** Seconds from drafting to validBefore (AUTHCAP_VALIDITY_SECONDS, default 900). */
  validitySeconds: number;
  /**
   * When a capture counts as final (AUTHCAP_CONFIRMATIONS): a number of blocks built on top of the
   * capture's block (default 1), or `safe` / `finalized` to wait for the node's own finality tags.
   */
  confirmations: Confirmations;
  /** How often waits poll the node, in ms (when no block announcement wakes them first). */
  pollingIntervalMs?: number;
  /** The node's WebSocket endpoint: new blocks are announced over it (AUTHCAP_WS_URL, default the RPC URL as ws). */
  wsUrl?: string;
  /** How often open authorizations re-read the chain for outside consumption (AUTHCAP_RECONCILE_SECONDS). */
  reconcileIntervalSeconds?: number;
  /** The longest window accepted for a pre-signed authorization (AUTHCAP_MAX_VALIDITY_SECONDS, default 7 days). */
  maxValiditySeconds?: number;
  /** Events after which a resting authorization workflow continues as new (AUTHCAP_HISTORY_LIMIT). */
  historyLimit?: number;
  /**
   * How long one signed refund attempt is valid (AUTHCAP_REFUND_VALIDITY_SECONDS, default 300): an
   * attempt not mined by then is signed again under the same nonce; one that reverted is reported
   * failed once this window has closed with its nonce unused.
   */
  refundValiditySeconds?: number;
}

export type Confirmations = number | 'safe' | 'finalized';

/** A week: long enough for a delayed shipment, short enough that a forgotten authorization ends. */
export const DEFAULT_MAX_VALIDITY_SECONDS = 7 * 24 * 3600;
/** Well under Temporal's 51,200-event limit (and its 10,240 warning), so replays stay cheap. */
export const DEFAULT_HISTORY_LIMIT = 2_000;
export const DEFAULT_REFUND_VALIDITY_SECONDS = 300;

/** Fees are re-read at most this often: about a block on a fast chain. */
const FEES_FRESH_MS = 1_000;

export interface ChainContext {
  /** CAIP-2 id of the network (e.g. "eip155:8453"). */
  network: string;
  chainId: number;
  /** What a (payer, nonce) digest is scoped by (activities/nonceKey.ts): this network and token. */
  nonceScope: string;
  publicClient: PublicClient<Transport, Chain>;
  walletClient: WalletClient<Transport, Chain, Account>;
  /** The first merchant key's address (the only one unless MERCHANT_PRIVATE_KEYS names more). */
  merchant: Address;
  /** Every merchant key's address, in configured order. */
  merchants: Address[];
  /** The local account of a merchant address (the first one when none is named). */
  accountFor(merchant?: Address): LocalAccount;
  isMerchant(address: string): boolean;
  /** The key that sends for this payee: the payee itself when it is one of ours, else the first key. */
  senderFor(payee?: string): Address;
  /** The merchant key a new authorization will pay (and be captured by): round robin over all keys. */
  nextMerchant(): Address;
  tokenAddress: Address;
  validitySeconds: number;
  confirmations: Confirmations;
  pollingIntervalMs: number;
  logs: LogReader;
  /** New blocks as the node announces them, shared by every wait in this worker. */
  heads: HeadFeed;
  /** Fees for the merchant's transactions, read at most once a second for all of them. */
  feesPerGas(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }>;
  rpcMetrics: RpcMetrics;
  reconcileIntervalSeconds: number;
  maxValiditySeconds: number;
  historyLimit: number;
  refundValiditySeconds: number;
  /** Nonces this worker's capture activities are following: the log watcher leaves them to them. */
  followed: FollowedNonces;
  /** The network's escrow and collectors; absent: this network holds no funds. */
  escrow?: EscrowAddresses;
}

/** One network as the worker serves it: its endpoints, keys and finality, and the tokens it takes there. */
export interface NetworkSettings {
  /** CAIP-2 id; read from the node when absent (a context made for one chain: createChainContext). */
  network?: string;
  /**
   * The chain id, when the node cannot be asked now (its network waits for it: ChainContexts): the
   * contexts are made without a node call, and the deployment's start check runs once it answers.
   */
  chainId?: number;
  rpcUrls: string[];
  wsUrl?: string;
  confirmations: Confirmations;
  /** Most blocks per eth_getLogs call. */
  logSpan?: number;
  merchantPrivateKeys: Hex[];
  tokens: Address[];
  /** The network's escrow and collectors (the deployment's `escrow`): what holds go through. */
  escrow?: EscrowAddresses;
}

/** The policy every network shares (validity windows, history limits): ChainConfig without its one network. */
export type ChainPolicy = Omit<ChainConfig, 'rpcUrl' | 'tokenAddress' | 'merchantPrivateKey' | 'merchantPrivateKeys' | 'confirmations' | 'wsUrl'>;

export async function createChainContext(config: ChainConfig): Promise<ChainContext> {
  const [ctx] = await createNetworkContexts(
    {
      rpcUrls: [config.rpcUrl],
      wsUrl: config.wsUrl,
      confirmations: config.confirmations,
      merchantPrivateKeys: [config.merchantPrivateKey, ...(config.merchantPrivateKeys ?? [])],
      tokens: [config.tokenAddress],
    },
    config,
  );
  return ctx!;
}

/**
 * The contexts of one network, one per token: they share the network's clients, keys, head feed, log
 * reader, fee cache, metrics and followed nonces, so a network costs one set of node connections
 * however many tokens it has.
 */
export async function createNetworkContexts(settings: NetworkSettings, policy: ChainPolicy): Promise<ChainContext[]> {
  const rpcMetrics = new RpcMetrics();
  // Retries are Temporal's job (activity retry policies), so the transport itself does not retry;
  // with several endpoints a failing one hands the call to the next (viem's fallback).
  const transports = settings.rpcUrls.map((url) => instrumentedHttp(url, rpcMetrics, { retryCount: 0 }));
  const transport = transports.length === 1 ? transports[0]! : fallback(transports, { retryCount: 0 });
  const chainId = settings.chainId ?? (await createPublicClient({ transport }).getChainId());
  const network = settings.network ?? `eip155:${chainId}`;
  if (network !== `eip155:${chainId}`) throw new Error(`the node for ${network} serves chain ${chainId}`);
  const chain = defineChain({
    id: chainId,
    name: network,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: settings.rpcUrls } },
  });
  const pollingIntervalMs = policy.pollingIntervalMs ?? 200;
  const keys = [...new Set(settings.merchantPrivateKeys.map((k) => k.toLowerCase() as Hex))];
  if (keys.length === 0) throw new Error(`no merchant key for ${network}`);
  const account = localAccount(keys[0]!);
  const accounts = new Map(keys.map((k) => localAccount(k)).map((a) => [a.address.toLowerCase(), a] as const));
  const merchants = [...accounts.values()].map((a) => a.address);
  let turn = 0;
  const publicClient = createPublicClient({ chain, transport, pollingInterval: pollingIntervalMs });
  const walletClient = createWalletClient({ chain, transport, account });
  let fees: { at: number; value: Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> } | undefined;
  const feesPerGas = () => {
    if (!fees || Date.now() - fees.at > FEES_FRESH_MS) {
      const value = publicClient.estimateFeesPerGas().then((f) => ({ maxFeePerGas: f.maxFeePerGas, maxPriorityFeePerGas: f.maxPriorityFeePerGas }));
      fees = { at: Date.now(), value };
      value.catch(() => (fees = undefined));
    }
    return fees.value;
  };
  const shared = {
    network,
    chainId,
    publicClient,
    walletClient,
    merchant: account.address,
    merchants,
    accountFor: (merchant?: Address) => {
      const found = accounts.get((merchant ?? account.address).toLowerCase());
      if (!found) throw new Error(`${merchant} is not one of this worker's merchant keys on ${network}`);
      return found;
    },
    isMerchant: (address: string) => accounts.has(address.toLowerCase()),
    senderFor: (payee?: string) => accounts.get((payee ?? '').toLowerCase())?.address ?? account.address,
    nextMerchant: () => merchants[turn++ % merchants.length]!,
    validitySeconds: policy.validitySeconds,
    confirmations: settings.confirmations,
    pollingIntervalMs,
    logs: new LogReader(publicClient, settings.logSpan ? { maxSpanBlocks: BigInt(settings.logSpan) } : {}),
    heads: new HeadFeed(chain, settings.wsUrl, pollingIntervalMs),
    feesPerGas,
    rpcMetrics,
    reconcileIntervalSeconds: policy.reconcileIntervalSeconds ?? 0,
    maxValiditySeconds: policy.maxValiditySeconds ?? DEFAULT_MAX_VALIDITY_SECONDS,
    historyLimit: policy.historyLimit ?? DEFAULT_HISTORY_LIMIT,
    refundValiditySeconds: policy.refundValiditySeconds ?? DEFAULT_REFUND_VALIDITY_SECONDS,
    followed: new FollowedNonces(),
    ...(settings.escrow ? { escrow: settings.escrow } : {}),
  };
  return settings.tokens.map((tokenAddress) => ({ ...shared, tokenAddress, nonceScope: nonceScopeOf(network, tokenAddress) }));
}
