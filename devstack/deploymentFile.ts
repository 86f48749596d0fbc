// The dev stack's deployment configuration (`${stateDir}/deployment.json`), in the schema every
// process reads (runtime/deployment/schema.ts): the worker and API processes it starts are configured
// through AUTHCAP_CONFIG as a production deployment is, and the in-process ones load the same file.
// On an operator's chain the file is theirs (AUTHCAP_CONFIG). Keys never go in it: `merchantKeys`
// names the environment variables that hold them.
import { chmodSync, writeFileSync } from 'node:fs';
import type { Address } from 'viem';
import { join, resolve } from 'node:path';
import type { ChainConfig } from '../activities/index.js';
import { loadDeployment, variablesNamedBy, type LoadedDeployment } from '../runtime/deployment/load.js';
import { chainConfigOf, type ChainPolicySettings } from '../worker/config.js';
import { resolveDeployment, type ResolvedDeployment } from '../runtime/deployment/resolve.js';
import { deploymentSchema, type DeploymentFile } from '../runtime/deployment/schema.js';
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

/** The dev chain's networks, each with its tokens; the first network's first token is the default. */
export function devDeploymentConfig(networks: DevNetwork[], options: DevDeploymentOptions): DeploymentFile {
  return {
    networks: networks.map((network) => ({
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
      ...(network.escrow
        ? { escrow: { address: network.escrow.escrow, paymentCollector: network.escrow.paymentCollector, refundCollector: network.escrow.refundCollector } }
        : {}),
    })),
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

/** The operator's deployment file (AUTHCAP_CONFIG): their chain instead of anvil. */
export function givenDeploymentFile(settings: { AUTHCAP_CONFIG?: string }): string | undefined {
  const given = settings.AUTHCAP_CONFIG?.trim();
  return given ? resolve(given) : undefined;
}

/**
 * The stack's own file as the in-process worker and client take it, checked against the chains: the
 * keys are the dev chain's (the stack's own), anything else the file names from the environment.
 */
export async function loadDevDeployment(file: string, chainConfig: ChainConfig, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedDeployment> {
  const loaded = loadDeployment({ ...env, AUTHCAP_CONFIG: file, ...merchantKeyEnv(chainConfig) });
  return resolveDeployment(loaded);
}

/** The dev chain's merchant keys under the names its deployment.json gives them. */
export function merchantKeyEnv(chainConfig: Pick<ChainConfig, 'merchantPrivateKey' | 'merchantPrivateKeys'>): Record<string, string> {
  return { MERCHANT_PRIVATE_KEY: chainConfig.merchantPrivateKey, MERCHANT_PRIVATE_KEYS: (chainConfig.merchantPrivateKeys ?? []).join(',') };
}

/**
 * The operator's file as every process takes it: loaded with its keys from the environment, checked
 * against the chains (a wrong id or token stops the start, with why).
 */
export async function loadOperatorDeployment(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ loaded: LoadedDeployment; deployment: ResolvedDeployment }> {
  const loaded = loadDeployment({ ...env, AUTHCAP_CONFIG: file });
  return { loaded, deployment: await resolveDeployment(loaded) };
}

/** What the stack runs on: its deployment file, the first network as the in-process worker takes it, and what each process is given. */
export interface StackDeployment {
  configFile: string;
  chainConfig: ChainConfig;
  deployment: ResolvedDeployment;
  /** The variables the file names, for the worker processes and the API processes (appProcesses.ts). */
  fileEnv: { worker: Record<string, string>; api: Record<string, string> };
}

/** The dev chain's own deployment.json, written in the state dir and checked against the anvils. */
export async function devStackDeployment(stateDir: string, devChain: DevChain): Promise<StackDeployment> {
  const { chainConfig } = devChain;
  const config = devDeploymentConfig(devChain.networks, {
    confirmations: chainConfig.confirmations,
    headFeed: !!chainConfig.wsUrl,
    moreMerchantKeys: (chainConfig.merchantPrivateKeys ?? []).length > 0,
  });
  const configFile = writeDeploymentFile(stateDir, config);
  const deployment = await loadDevDeployment(configFile, chainConfig);
  return { configFile, chainConfig, deployment, fileEnv: { worker: merchantKeyEnv(chainConfig), api: {} } };
}

/** The operator's file (AUTHCAP_CONFIG): their networks, keys from the variables it names. */
export async function operatorStackDeployment(file: string, policy: ChainPolicySettings, env: NodeJS.ProcessEnv = process.env): Promise<StackDeployment> {
  const { loaded, deployment } = await loadOperatorDeployment(file, env);
  const named = variablesNamedBy(file);
  const pick = (names: string[]) => Object.fromEntries(names.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]!]])));
  return {
    configFile: file,
    chainConfig: chainConfigOf(loaded.networks[0]!, policy),
    deployment,
    fileEnv: { worker: pick([...named.keys, ...named.urls]), api: pick(named.urls) },
  };
}

/**
 * dev.json's `networks`, from what the chains said of the tokens. The network the top-level fields
 * describe (rpcUrl, tokenAddress) comes first; the rest keep the file's order.
 */
export function devJsonNetworks(deployment: ResolvedDeployment, firstChainId: number): DevNetwork[] {
  const networks = deployment.networks.map((network) => ({
    network: network.network,
    chainId: network.chainId,
    name: network.name,
    rpcUrl: network.rpcUrls[0]!,
    tokens: network.tokens.map(({ address, symbol, decimals }) => ({ address, symbol, decimals })),
    ...(network.escrow
      ? { escrow: { escrow: network.escrow.address, paymentCollector: network.escrow.paymentCollector, refundCollector: network.escrow.refundCollector } }
      : {}),
  }));
  return [...networks.filter((n) => n.chainId === firstChainId), ...networks.filter((n) => n.chainId !== firstChainId)];
}

/** Every token served, once each, the first network's first (the API refuses a token contract as payer). */
export function servedTokens(first: Address, deployment: ResolvedDeployment): Address[] {
  const all = [first, ...deployment.networks.flatMap((network) => network.tokens.map((token) => token.address))];
  return [...new Map(all.map((address) => [address.toLowerCase(), address])).values()];
}
