// The dev stack's deployment configuration (`${stateDir}/deployment.json`), in the schema every
// process reads (runtime/deployment/schema.ts): the worker and API processes it starts are configured
// through AUTHCAP_CONFIG as a production deployment is, and the in-process ones load the same file.
// Keys never go in it: `merchantKeys` names the environment variables that hold them.
import { chmodSync, writeFileSync } from 'node:fs';
import type { Address } from 'viem';
import { join, resolve } from 'node:path';
import type { ChainConfig } from '../activities/index.js';
import { loadDeployment } from '../runtime/deployment/load.js';
import { networkReader, resolveDeployment, type ResolvedDeployment } from '../runtime/deployment/resolve.js';
import { deploymentSchema, networkOfChainId, type DeploymentFile } from '../runtime/deployment/schema.js';
import type { DevChain, DevNetwork } from './devNetworks.js';

export const DEPLOYMENT_FILE = 'deployment.json';

type Confirmations = ChainConfig['confirmations'];

/**
 * The loader refuses a named variable that is empty, so MERCHANT_PRIVATE_KEYS is named only when
 * there are more keys. The same keys serve every network (each network has its own relayers).
 */
function merchantKeyVariables(moreKeys: boolean): string[] {
  return ['MERCHANT_PRIVATE_KEY', ...(moreKeys ? ['MERCHANT_PRIVATE_KEYS'] : [])];
}

export interface DevDeploymentOptions {
  confirmations: Confirmations;
  /** Announce new blocks over anvil's WebSocket (off when AUTHCAP_WS_URL is set empty). */
  headFeed: boolean;
  moreMerchantKeys: boolean;
}

/**
 * The dev chain's networks. The first keeps the one-network relayer ids and watcher cursor
 * (singleNetworkIds), so a state dir from before this file existed carries on where it was.
 */
export function devDeploymentConfig(networks: DevNetwork[], options: DevDeploymentOptions): DeploymentFile {
  return {
    networks: networks.map((network, i) => ({
      id: network.network,
      name: network.name,
      rpcUrls: [network.rpcUrl],
      // anvil answers JSON-RPC over WebSocket on the same port.
      ...(options.headFeed ? { wsUrl: network.rpcUrl.replace(/^http/, 'ws') } : {}),
      // A local anvil has no provider key in its URL: a payer's wallet may be given it.
      publicRpcUrls: [network.rpcUrl],
      confirmations: options.confirmations,
      tokens: network.tokens.map((token) => token.address),
      merchantKeys: merchantKeyVariables(options.moreMerchantKeys),
      ...(i === 0 ? { singleNetworkIds: true } : {}),
    })),
  };
}

/** An operator's chain named by RPC_URL and TOKEN_ADDRESS: one network, its id read from the node. */
export async function externalDeploymentConfig(chainConfig: ChainConfig, confirmations: Confirmations): Promise<DeploymentFile> {
  const chainId = await networkReader([chainConfig.rpcUrl]).getChainId();
  return {
    networks: [
      {
        id: networkOfChainId(chainId),
        rpcUrls: [chainConfig.rpcUrl],
        ...(chainConfig.wsUrl ? { wsUrl: chainConfig.wsUrl } : {}),
        confirmations,
        tokens: [chainConfig.tokenAddress],
        merchantKeys: merchantKeyVariables((chainConfig.merchantPrivateKeys ?? []).length > 0),
        singleNetworkIds: true,
      },
    ],
  };
}

/** Writes the configuration (0600: it may hold a provider's URL), checked against the schema first. */
export function writeDeploymentFile(stateDir: string, config: DeploymentFile): string {
  // Ours to get right: a file the processes would refuse must stop the stack here, with why.
  deploymentSchema.parse(config);
  const file = join(stateDir, DEPLOYMENT_FILE);
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** On an operator's chain, a configuration of theirs (AUTHCAP_CONFIG) is used as it is. */
export function givenDeploymentFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = env.AUTHCAP_CONFIG?.trim();
  return given ? resolve(given) : undefined;
}

/** The stack's own deployment.json, or on an operator's chain theirs (AUTHCAP_CONFIG) if they named one. */
export async function deploymentFileFor(
  stateDir: string,
  confirmations: Confirmations,
  chainConfig: ChainConfig,
  devChain: DevChain | undefined,
): Promise<string> {
  if (!devChain) return givenDeploymentFile() ?? writeDeploymentFile(stateDir, await externalDeploymentConfig(chainConfig, confirmations));
  const config = devDeploymentConfig(devChain.networks, {
    confirmations,
    headFeed: !!chainConfig.wsUrl,
    moreMerchantKeys: (chainConfig.merchantPrivateKeys ?? []).length > 0,
  });
  return writeDeploymentFile(stateDir, config);
}

/**
 * The file as the in-process worker and client take it, checked against the chains: the keys come
 * from the chain config (the stack's own on anvil), anything else the file names from the environment.
 */
export async function loadDevDeployment(file: string, chainConfig: ChainConfig, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedDeployment> {
  const loaded = loadDeployment({
    ...env,
    AUTHCAP_CONFIG: file,
    MERCHANT_PRIVATE_KEY: chainConfig.merchantPrivateKey,
    MERCHANT_PRIVATE_KEYS: (chainConfig.merchantPrivateKeys ?? []).join(','),
  });
  return resolveDeployment(loaded);
}

/**
 * dev.json's `networks`, from what the chains said of the tokens. The network the top-level fields
 * describe (RPC_URL's chain) comes first; the rest keep the file's order.
 */
export function devJsonNetworks(deployment: ResolvedDeployment, firstChainId: number): DevNetwork[] {
  const networks = deployment.networks.map((network) => ({
    network: network.network,
    chainId: network.chainId,
    name: network.name,
    rpcUrl: network.rpcUrls[0]!,
    tokens: network.tokens.map(({ address, symbol, decimals }) => ({ address, symbol, decimals })),
  }));
  return [...networks.filter((n) => n.chainId === firstChainId), ...networks.filter((n) => n.chainId !== firstChainId)];
}

/** Every token served, once each, the first network's first (the API refuses a token contract as payer). */
export function servedTokens(first: Address, deployment: ResolvedDeployment): Address[] {
  const all = [first, ...deployment.networks.flatMap((network) => network.tokens.map((token) => token.address))];
  return [...new Map(all.map((address) => [address.toLowerCase(), address])).values()];
}
