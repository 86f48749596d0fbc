// The dev chain's networks: one anvil (chain 31337) with our USDC, or with `networks: 2`
// (AUTHCAP_DEV_NETWORKS=2 for npm start) a second anvil (chain 31338) with USDC and an 18-decimal
// "Dev Euro" (DEUR18), so requests that name their network and token, and amounts in two scales, can
// be tried on one machine. Each network is described for deployment.json and dev.json.
import { join } from 'node:path';
import { createTestClient, defineChain, http, parseEther, type Address } from 'viem';
import type { ChainConfig } from '../activities/index.js';
import { networkOfChainId } from '../runtime/deployment/schema.js';
import type { Settings } from '../runtime/settings/catalog.js';
import { chainConfigOf, type ChainPolicySettings } from '../worker/config.js';
import { startAnvil, type Anvil } from './anvil.js';
import type { EscrowAddresses } from '../domain/escrow.js';
import { deployDevEscrow } from './escrow.js';
import { escrowArtifacts } from '../contracts/artifacts.js';
import { deployDevTokens, devAccounts, extraMerchantKeys, type DevTokenSpec } from './token.js';

export type DevNetworkCount = 1 | 2;

interface DevNetworkSpec {
  chainId: number;
  name: string;
  /** anvil's state in the state dir when the stack keeps it (the first keeps its old name). */
  stateFile: string;
  /** Deployed in this order, so each keeps its address across restarts (token.ts). */
  tokens: (DevTokenSpec & { symbol: string; decimals: number })[];
}

const USDC = { name: 'USD Coin', symbol: 'USDC', decimals: 6 };
const DEV_EURO = { name: 'Dev Euro', symbol: 'DEUR18', decimals: 18 };

export const DEV_NETWORKS: readonly DevNetworkSpec[] = [
  { chainId: 31337, name: 'Dev chain', stateFile: 'anvil-state.json', tokens: [USDC] },
  { chainId: 31338, name: 'Dev chain 2', stateFile: 'anvil-state-31338.json', tokens: [USDC, DEV_EURO] },
];

/** A network as the stack started it: what deployment.json and dev.json say of it. */
export interface DevNetwork {
  network: string;
  chainId: number;
  name: string;
  rpcUrl: string;
  tokens: { address: Address; symbol: string; decimals: number }[];
  /** The escrow and collectors holds go through: authcap's own on the dev chain (devstack/escrow.ts); absent: none. */
  escrow?: EscrowAddresses;
}

export interface DevChain {
  /** The first network's first token and every merchant key, with the worker's policy (the in-process worker's). */
  chainConfig: ChainConfig;
  networks: DevNetwork[];
  anvils: Anvil[];
}

export interface DevChainOptions {
  networks: DevNetworkCount;
  /** anvil's port for each network, in order. */
  rpcPorts: number[];
  stateDir: string;
  persistent: boolean;
  blockTimeSeconds: number;
  /** Merchant keys, all serving every network: anvil's account 1, then well-known extra keys. */
  merchantKeys: number;
  /** When a capture counts as final on the dev chain (its deployment.json says so). */
  confirmations: ChainConfig['confirmations'];
  /** New blocks announced over anvil's WebSocket (off: AUTHCAP_WS_URL set empty). */
  headFeed: boolean;
  /** The worker's policy (validity windows, reconcile interval) for the in-process worker. */
  policy: ChainPolicySettings;
  /** A folder of escrow contracts to deploy instead of authcap's own (AUTHCAP_DEV_ESCROW_ARTIFACTS). */
  escrowArtifacts?: string;
}

/** The dev stack's settings the dev chain is made of. */
export type DevChainSettings = Pick<Settings<'dev-stack'>, 'AUTHCAP_MERCHANT_KEYS' | 'AUTHCAP_CONFIRMATIONS' | 'AUTHCAP_WS_URL'> &
  Partial<Pick<Settings<'dev-stack'>, 'AUTHCAP_DEV_ESCROW_ARTIFACTS'>>;

/**
 * The stack's options as the dev chain takes them, the dev stack's settings where an option is not
 * given, and the worker's policy: the second anvil on rpcPort + 1 unless given.
 */
export function devChainOptions(
  options: {
    networks?: DevNetworkCount;
    rpcPort: number;
    moreRpcPorts?: number[];
    stateDir: string;
    persistent: boolean;
    blockTimeSeconds?: number;
    merchantKeys?: number;
    confirmations?: ChainConfig['confirmations'];
  },
  settings: DevChainSettings,
  policy: ChainPolicySettings,
): DevChainOptions {
  const networks = options.networks ?? 1;
  return {
    networks,
    rpcPorts: [options.rpcPort, ...(networks > 1 ? [options.moreRpcPorts?.[0] ?? options.rpcPort + 1] : [])],
    stateDir: options.stateDir,
    persistent: options.persistent,
    blockTimeSeconds: options.blockTimeSeconds ?? 0.2,
    merchantKeys: options.merchantKeys ?? settings.AUTHCAP_MERCHANT_KEYS,
    confirmations: options.confirmations ?? settings.AUTHCAP_CONFIRMATIONS,
    headFeed: settings.AUTHCAP_WS_URL !== '',
    policy,
    ...(settings.AUTHCAP_DEV_ESCROW_ARTIFACTS ? { escrowArtifacts: settings.AUTHCAP_DEV_ESCROW_ARTIFACTS } : {}),
  };
}

/** Starts the anvils one after the other; `stops` gets each as soon as it runs, so a failure stops what started. */
export async function startDevChain(options: DevChainOptions, stops: (() => Promise<void>)[]): Promise<DevChain> {
  const accounts = devAccounts();
  const extra = extraMerchantKeys(options.merchantKeys - 1);
  const anvils: Anvil[] = [];
  const networks: DevNetwork[] = [];
  for (const [i, spec] of DEV_NETWORKS.slice(0, options.networks).entries()) {
    const port = options.rpcPorts[i];
    if (port === undefined) throw new Error(`no anvil port for the dev chain's network ${i + 1}`);
    const anvil = await startAnvil({
      port,
      chainId: spec.chainId,
      blockTimeSeconds: options.blockTimeSeconds,
      stateFile: options.persistent ? join(options.stateDir, spec.stateFile) : undefined,
    });
    stops.push(() => anvil.stop());
    anvils.push(anvil);
    const chain = defineChain({
      id: anvil.chainId,
      name: spec.name,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [anvil.rpcUrl] } },
    });
    const addresses = await deployDevTokens({ rpcUrl: anvil.rpcUrl, chain, accounts, tokens: spec.tokens });
    const escrow = await deployDevEscrow({ rpcUrl: anvil.rpcUrl, chain, artifacts: escrowArtifacts(options.escrowArtifacts) });
    // Merchant keys beyond anvil's funded accounts get gas money directly, on every network they serve.
    const funding = createTestClient({ mode: 'anvil', chain, transport: http(anvil.rpcUrl) });
    for (const key of extra) await funding.setBalance({ address: key.address, value: parseEther('1000') });
    networks.push({
      network: networkOfChainId(spec.chainId),
      chainId: spec.chainId,
      name: spec.name,
      rpcUrl: anvil.rpcUrl,
      tokens: spec.tokens.map((token, j) => ({ address: addresses[j]!, symbol: token.symbol, decimals: token.decimals })),
      escrow,
    });
  }
  const first = networks[0]!;
  const chainConfig = chainConfigOf(
    {
      rpcUrls: [first.rpcUrl],
      // anvil answers JSON-RPC over WebSocket on the same port; AUTHCAP_WS_URL set empty: none (polled).
      wsUrl: options.headFeed ? first.rpcUrl.replace(/^http/, 'ws') : undefined,
      tokens: [first.tokens[0]!.address],
      merchantPrivateKeys: [accounts.merchant.privateKey, ...extra.map((k) => k.privateKey)],
      confirmations: options.confirmations,
    },
    options.policy,
  );
  return { chainConfig, networks, anvils };
}
