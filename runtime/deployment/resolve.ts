// The start checks: each network's node must be the chain its id names, and each token's name,
// version, decimals, symbol and EIP-3009 form are read from it, never configured by hand.
import { BaseError, createPublicClient, fallback, http, type Address, type PublicClient } from 'viem';
import { hasBytesOverloads } from '../../activities/tokenFeatures.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { Catalog, type ServedNetwork, type ServedToken, type SignatureForm } from './catalog.js';
import { DeploymentConfigError, type LoadedDeployment, type LoadedNetwork } from './load.js';
import { chainIdOfNetwork, networkOfChainId } from './schema.js';

export interface ResolvedNetwork extends Omit<LoadedNetwork, 'id' | 'name' | 'tokens'>, ServedNetwork {}

export interface ResolvedDeployment {
  source: string;
  networks: ResolvedNetwork[];
  catalog: Catalog;
}

export async function resolveDeployment(loaded: LoadedDeployment, options: { timeoutMs?: number } = {}): Promise<ResolvedDeployment> {
  const networks = await Promise.all(loaded.networks.map((network) => resolveNetwork(network, loaded.source, options.timeoutMs ?? 10_000)));
  const ids = networks.map((n) => n.network);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) throw new DeploymentConfigError(`${loaded.source}: two networks are ${twice}`);
  return {
    source: loaded.source,
    networks,
    catalog: new Catalog(
      networks.map(({ network, chainId, name, tokens, publicRpcUrls }) => ({ network, chainId, name, tokens, ...(publicRpcUrls ? { publicRpcUrls } : {}) })),
    ),
  };
}

/** A read-only client over every URL of a network, the next taking over when one fails. */
export function networkReader(rpcUrls: readonly string[], timeoutMs = 10_000): PublicClient {
  const transports = rpcUrls.map((url) => http(url, { timeout: timeoutMs, retryCount: 0 }));
  return createPublicClient({ transport: transports.length === 1 ? transports[0]! : fallback(transports, { retryCount: 0 }) });
}

async function resolveNetwork(network: LoadedNetwork, source: string, timeoutMs: number): Promise<ResolvedNetwork> {
  const label = network.id ?? 'RPC_URL';
  const client = networkReader(network.rpcUrls, timeoutMs);
  let chainId: number;
  try {
    chainId = await client.getChainId();
  } catch (err) {
    throw new DeploymentConfigError(`${source}: ${label}: the node at ${redact(network.rpcUrls[0]!)} did not answer eth_chainId (${shortMessage(err)})`);
  }
  if (network.id && chainIdOfNetwork(network.id) !== chainId)
    throw new DeploymentConfigError(
      `${source}: ${network.id}: the node at ${redact(network.rpcUrls[0]!)} serves chain ${chainId} (${networkOfChainId(chainId)}), not ${network.id}`,
    );
  const id = network.id ?? networkOfChainId(chainId);
  const tokens = await Promise.all(network.tokens.map((address) => readToken(client, address as Address, `${source}: ${id}: token ${address}`)));
  const { id: _id, name, tokens: _addresses, ...rest } = network;
  return { ...rest, network: id, chainId, name: name ?? id, tokens };
}

async function readToken(client: PublicClient, address: Address, where: string): Promise<ServedToken> {
  const read = <F extends 'name' | 'version' | 'symbol' | 'decimals'>(functionName: F) =>
    client.readContract({ address, abi: tokenAbi, functionName }) as Promise<F extends 'decimals' ? number : string>;
  try {
    const code = await client.getCode({ address });
    if (!code || code === '0x') throw new DeploymentConfigError(`${where}: no contract at this address on this network`);
    const [name, version, symbol, decimals, form] = await Promise.all([
      read('name'),
      read('version'),
      read('symbol'),
      read('decimals'),
      signatureForm(client, address),
    ]);
    return { address, name, version, symbol, decimals: Number(decimals), form };
  } catch (err) {
    if (err instanceof DeploymentConfigError) throw err;
    throw new DeploymentConfigError(`${where}: not an EIP-3009 token authcap can use (${shortMessage(err)})`);
  }
}

/** v2.2's `bytes signature` overloads (ERC-1271 too), or v2.1's `v, r, s` only: the activities' own probe. */
export async function signatureForm(client: PublicClient, address: Address): Promise<SignatureForm> {
  return (await hasBytesOverloads(client, address)) ? 'bytes' : 'vrs';
}

function redact(url: string): string {
  // Provider URLs carry API keys in their path or query: show the host only.
  try {
    return new URL(url).host;
  } catch {
    return 'the configured URL';
  }
}

function shortMessage(err: unknown): string {
  return err instanceof BaseError ? err.shortMessage : (err as Error).message.split('\n')[0]!;
}
