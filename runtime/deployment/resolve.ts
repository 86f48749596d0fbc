// The start checks: each network's node must be the chain its id names, and each token's name,
// version, decimals, symbol and EIP-3009 form are read from it, never configured by hand.
import { BaseError, createPublicClient, fallback, http, HttpRequestError, TimeoutError, type Address, type PublicClient } from 'viem';
import { hasBytesOverloads } from '../chain/tokenFeatures.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { checkEscrow } from './escrowCheck.js';
import { Catalog, type ServedNetwork, type ServedToken, type SignatureForm } from './catalog.js';
import { DeploymentConfigError, type LoadedDeployment, type LoadedNetwork } from './load.js';
import { chainIdOfNetwork, networkOfChainId } from './schema.js';

export interface ResolvedNetwork extends Omit<LoadedNetwork, 'id' | 'name' | 'tokens' | 'escrow'>, ServedNetwork {}

export interface ResolvedDeployment {
  source: string;
  /** The networks served now, in configured order; one whose node answers late is added here. */
  networks: ResolvedNetwork[];
  catalog: Catalog;
  /**
   * Configured networks whose node did not answer at start (resolveDeployment's `degraded`): not
   * served until retryUnavailable() resolves them, while the others serve. Empty otherwise.
   */
  unavailable: UnavailableNetwork[];
}

/** A configured network not served yet: what the configuration says of it, and why it waits. */
export interface UnavailableNetwork {
  network: string;
  chainId: number;
  rpcUrls: string[];
  tokens: Address[];
  reason: string;
  loaded: LoadedNetwork;
}

/** The node of a network did not answer (as opposed to answering wrong): the one start error a deployment can wait out. */
export class NodeUnreachableError extends DeploymentConfigError {
  override name = 'NodeUnreachableError';
}

export interface ResolveOptions {
  timeoutMs?: number;
  /**
   * Each network its own failure domain: a network whose node does not answer is left `unavailable` instead of stopping the start; retryUnavailable() brings it in.
   * A node that answers wrong (another chain, no such token) still stops the start.
   */
  degraded?: boolean;
}

export async function resolveDeployment(loaded: LoadedDeployment, options: ResolveOptions = {}): Promise<ResolvedDeployment> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const outcomes = await Promise.all(
    loaded.networks.map((network) =>
      resolveNetwork(network, loaded.source, timeoutMs).then(
        (resolved) => ({ resolved }),
        (err: unknown) => {
          if (!options.degraded || !(err instanceof NodeUnreachableError)) throw err;
          const unavailable: UnavailableNetwork = {
            network: network.id,
            chainId: chainIdOfNetwork(network.id),
            rpcUrls: network.rpcUrls,
            tokens: network.tokens as Address[],
            reason: err.message,
            loaded: network,
          };
          return { unavailable };
        },
      ),
    ),
  );
  const networks = outcomes.flatMap((o) => ('resolved' in o ? [o.resolved] : []));
  const unavailable = outcomes.flatMap((o) => ('unavailable' in o ? [o.unavailable] : []));
  const ids = [...networks.map((n) => n.network), ...unavailable.map((n) => n.network)];
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) throw new DeploymentConfigError(`${loaded.source}: two networks are ${twice}`);
  const order = outcomes.map((o) => ('resolved' in o ? o.resolved.network : o.unavailable.network));
  return {
    source: loaded.source,
    networks,
    unavailable,
    catalog: new Catalog(networks.map(servedOf), { unavailable, order }),
  };
}

const servedOf = ({ network, chainId, name, tokens, publicRpcUrls, escrow }: ResolvedNetwork): ServedNetwork => ({
  network,
  chainId,
  name,
  tokens,
  ...(publicRpcUrls ? { publicRpcUrls } : {}),
  ...(escrow ? { escrow } : {}),
});

/**
 * Asks the nodes of a deployment's unavailable networks again, in the background, until each
 * answers; then the network is served (added to `networks` and the catalog) and `onResolved` hears
 * of it, with no restart. A node that answers wrong (another chain) is reported and asked again.
 */
export function retryUnavailable(
  deployment: ResolvedDeployment,
  options: {
    intervalMs?: number;
    maxIntervalMs?: number;
    timeoutMs?: number;
    onResolved?: (network: ResolvedNetwork) => void;
    log?: (line: string) => void;
  } = {},
): { stop(): void; settled: Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
      timer.unref?.();
    });
  const settled = (async () => {
    let interval = options.intervalMs ?? 2_000;
    while (!stopped && deployment.unavailable.length > 0) {
      await pause(interval);
      if (stopped) return;
      for (const waiting of [...deployment.unavailable]) {
        try {
          const resolved = await resolveNetwork(waiting.loaded, deployment.source, options.timeoutMs ?? 5_000);
          if (stopped) return;
          deployment.unavailable.splice(deployment.unavailable.indexOf(waiting), 1);
          deployment.networks.push(resolved);
          deployment.networks.sort((a, b) => deployment.catalog.order(a.network) - deployment.catalog.order(b.network));
          deployment.catalog.add(servedOf(resolved));
          options.onResolved?.(resolved);
        } catch (err) {
          waiting.reason = (err as Error).message;
          if (!(err instanceof NodeUnreachableError)) options.log?.(`${waiting.network} is still not served: ${waiting.reason}`);
        }
      }
      interval = Math.min(interval * 2, options.maxIntervalMs ?? 5_000);
    }
  })();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
    },
    settled,
  };
}

/** A read-only client over every URL of a network, the next taking over when one fails. */
export function networkReader(rpcUrls: readonly string[], timeoutMs = 10_000): PublicClient {
  const transports = rpcUrls.map((url) => http(url, { timeout: timeoutMs, retryCount: 0 }));
  return createPublicClient({ transport: transports.length === 1 ? transports[0]! : fallback(transports, { retryCount: 0 }) });
}

async function resolveNetwork(network: LoadedNetwork, source: string, timeoutMs: number): Promise<ResolvedNetwork> {
  const client = networkReader(network.rpcUrls, timeoutMs);
  let chainId: number;
  try {
    chainId = await client.getChainId();
  } catch (err) {
    throw new NodeUnreachableError(`${source}: ${network.id}: the node at ${redact(network.rpcUrls[0]!)} did not answer eth_chainId (${shortMessage(err)})`);
  }
  if (chainIdOfNetwork(network.id) !== chainId)
    throw new DeploymentConfigError(
      `${source}: ${network.id}: the node at ${redact(network.rpcUrls[0]!)} serves chain ${chainId} (${networkOfChainId(chainId)}), not ${network.id}`,
    );
  const id = network.id;
  const tokens = await Promise.all(network.tokens.map((address) => readToken(client, address as Address, `${source}: ${id}: token ${address}`)));
  const { id: _id, name, tokens: _addresses, escrow: escrowConfig, ...rest } = network;
  const escrow = escrowConfig
    ? await checkEscrow(client, escrowConfig, tokens, `${source}: ${id}`).catch(unreachableOr(`${source}: ${id}: escrow`))
    : undefined;
  return { ...rest, network: id, chainId, name: name ?? id, tokens, ...(escrow ? { escrow } : {}) };
}

/** A node that stopped answering half-way says nothing of the contract: the start may wait it out. */
function unreachableOr(where: string): (err: unknown) => never {
  return (err) => {
    if (isUnreachable(err)) throw new NodeUnreachableError(`${where}: the node did not answer (${shortMessage(err)})`);
    throw err;
  };
}

function isUnreachable(err: unknown): boolean {
  return err instanceof BaseError && err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null;
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
    if (isUnreachable(err)) unreachableOr(where)(err);
    throw new DeploymentConfigError(`${where}: not an EIP-3009 token authcap can use (${shortMessage(err)})`);
  }
}

/** v2.2's `bytes signature` overloads (ERC-1271 too), or v2.1's `v, r, s` only: the probe the worker also asks when a payer signs. */
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
