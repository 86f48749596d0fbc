// Reads the deployment configuration once per process: the file named by AUTHCAP_CONFIG, or the
// one-network variables (RPC_URL, TOKEN_ADDRESS, ...) that every deployment before it used. What
// comes back is checked against its schema, with `${VARIABLE}` references and keys resolved.
import { readFileSync } from 'node:fs';
import type { Hex } from 'viem';
import type { z } from 'zod';
import { deploymentSchema, networkIdSchema, type DeploymentConfig, type NetworkConfig } from './schema.js';

export class DeploymentConfigError extends Error {
  override name = 'DeploymentConfigError';
}

/** A network as a process runs it: URLs read from the environment, keys parsed. */
export interface LoadedNetwork extends Omit<NetworkConfig, 'id' | 'merchantKeys'> {
  /** The CAIP-2 id; `undefined` for the one-network variables (it is read from the node at start). */
  id: string | undefined;
  merchantPrivateKeys: Hex[];
}

export interface LoadedDeployment {
  /** Where it came from, for messages: the file, or "environment". */
  source: string;
  networks: LoadedNetwork[];
}

const KEY = /^0x[0-9a-fA-F]{64}$/;

export interface LoadOptions {
  /** Read the merchant keys (the worker); processes that never sign (API, CLI) leave them. */
  keys?: boolean;
}

// This module is the one reader of the chain settings: AUTHCAP_CONFIG, and the one-network variables
// (RPC_URL, TOKEN_ADDRESS, MERCHANT_PRIVATE_KEY(S), AUTHCAP_NETWORK, AUTHCAP_WS_URL,
// AUTHCAP_CONFIRMATIONS). The worker, the API and the dev stack take their networks from here.
export function loadDeployment(env: NodeJS.ProcessEnv = process.env, options: LoadOptions = {}): LoadedDeployment {
  const file = env.AUTHCAP_CONFIG?.trim();
  if (file) return fromFile(file, env, options);
  return fromSingleNetworkVariables(env, options);
}

/** Whether the environment names any network: AUTHCAP_CONFIG, or RPC_URL with TOKEN_ADDRESS. */
export function deploymentConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!env.AUTHCAP_CONFIG?.trim() || (!!env.RPC_URL && !!env.TOKEN_ADDRESS);
}

/** RPC_URL alone (an API without a token configured still asks it for /readyz and signatures). */
export function singleNetworkRpcUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.RPC_URL?.trim() || undefined;
}

/** The one network of RPC_URL, TOKEN_ADDRESS and MERCHANT_PRIVATE_KEY(S), whatever AUTHCAP_CONFIG says (the dev stack's own chain). */
export function loadSingleNetwork(env: NodeJS.ProcessEnv = process.env, options: LoadOptions = {}): LoadedNetwork {
  return fromSingleNetworkVariables(env, options).networks[0]!;
}

/** Parses a configuration's text (JSON); exported for tests and `authcap doctor`. */
export function parseDeployment(text: string, source: string, env: NodeJS.ProcessEnv = process.env, options: LoadOptions = {}): LoadedDeployment {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new DeploymentConfigError(`${source} is not JSON: ${(err as Error).message}`);
  }
  const parsed = deploymentSchema.safeParse(raw);
  if (!parsed.success) throw new DeploymentConfigError(`${source}: ${describeIssues(parsed.error)}`);
  return { source, networks: parsed.data.networks.map((network, i) => resolveNetwork(network, `${source}: networks[${i}] (${network.id})`, env, options)) };
}

function fromFile(file: string, env: NodeJS.ProcessEnv, options: LoadOptions): LoadedDeployment {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new DeploymentConfigError(`AUTHCAP_CONFIG names ${file}, which cannot be read: ${(err as Error).message}`);
  }
  return parseDeployment(text, file, env, options);
}

function fromSingleNetworkVariables(env: NodeJS.ProcessEnv, options: LoadOptions): LoadedDeployment {
  const missing = ['RPC_URL', 'TOKEN_ADDRESS', ...(options.keys === false ? [] : ['MERCHANT_PRIVATE_KEY'])].filter((name) => !env[name]);
  if (missing.length) throw new DeploymentConfigError(`set AUTHCAP_CONFIG, or ${missing.join(', ')} for one network (npm start sets them for the dev stack)`);
  if (env.AUTHCAP_NETWORK && !networkIdSchema.safeParse(env.AUTHCAP_NETWORK).success)
    throw new DeploymentConfigError(`AUTHCAP_NETWORK must be a CAIP-2 network id such as "eip155:8453", got "${env.AUTHCAP_NETWORK}"`);
  const parsed = deploymentSchema.safeParse({
    networks: [
      {
        id: env.AUTHCAP_NETWORK ?? 'eip155:1',
        rpcUrls: [env.RPC_URL],
        // Unset: RPC_URL's own WebSocket (ws(s)://, as documented); empty: none, new blocks are polled.
        ...(wsUrlOf(env) ? { wsUrl: wsUrlOf(env) } : {}),
        confirmations: confirmationsOf(env.AUTHCAP_CONFIRMATIONS),
        tokens: [env.TOKEN_ADDRESS],
        merchantKeys: ['MERCHANT_PRIVATE_KEY', ...(env.MERCHANT_PRIVATE_KEYS?.trim() ? ['MERCHANT_PRIVATE_KEYS'] : [])],
        singleNetworkIds: true,
      },
    ],
  });
  if (!parsed.success) throw new DeploymentConfigError(`the one-network variables: ${describeIssues(parsed.error, VARIABLE_OF)}`);
  const network: DeploymentConfig['networks'][number] = parsed.data.networks[0]!;
  const loaded = resolveNetwork(network, 'environment', env, options);
  // The one-network variables never named their chain: it is whatever RPC_URL serves (read at start).
  return { source: 'environment', networks: [{ ...loaded, id: env.AUTHCAP_NETWORK ?? undefined }] };
}

function wsUrlOf(env: NodeJS.ProcessEnv): string | undefined {
  if (env.AUTHCAP_WS_URL !== undefined) return env.AUTHCAP_WS_URL.trim() || undefined;
  return env.RPC_URL?.replace(/^http/, 'ws');
}

function confirmationsOf(raw: string | undefined): number | 'safe' | 'finalized' {
  if (raw === undefined || raw === '') return 1;
  if (raw === 'safe' || raw === 'finalized') return raw;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new DeploymentConfigError(`AUTHCAP_CONFIRMATIONS must be a positive whole number, "safe" or "finalized", got "${raw}"`);
  return value;
}

function resolveNetwork(network: NetworkConfig, where: string, env: NodeJS.ProcessEnv, options: LoadOptions): LoadedNetwork {
  const { merchantKeys, ...rest } = network;
  const keys = (options.keys === false ? [] : merchantKeys).flatMap((name) => {
    const value = env[name]?.trim();
    if (!value) throw new DeploymentConfigError(`${where}: merchantKeys names ${name}, which is not set in the environment`);
    return value.split(',').map((key, i) => {
      const trimmed = key.trim();
      if (!KEY.test(trimmed)) throw new DeploymentConfigError(`${where}: ${name}${i ? ` (key ${i + 1})` : ''} must be a 32-byte key as 0x-prefixed hex`);
      return trimmed.toLowerCase() as Hex;
    });
  });
  return {
    ...rest,
    rpcUrls: network.rpcUrls.map((url) => fromEnvironment(url, where, env)),
    ...(network.wsUrl ? { wsUrl: fromEnvironment(network.wsUrl, where, env) } : {}),
    merchantPrivateKeys: [...new Set(keys)],
  };
}

function fromEnvironment(value: string, where: string, env: NodeJS.ProcessEnv): string {
  const named = /^\$\{([A-Z_][A-Z0-9_]*)\}$/.exec(value);
  if (!named) return value;
  const resolved = env[named[1]!]?.trim();
  if (!resolved) throw new DeploymentConfigError(`${where}: ${value} is not set in the environment`);
  return resolved;
}

/** Which variable each field of the one network comes from, for messages. */
const VARIABLE_OF: Record<string, string> = {
  'networks[0].rpcUrls[0]': 'RPC_URL',
  'networks[0].wsUrl': 'AUTHCAP_WS_URL',
  'networks[0].confirmations': 'AUTHCAP_CONFIRMATIONS',
  'networks[0].tokens[0]': 'TOKEN_ADDRESS',
  'networks[0].id': 'AUTHCAP_NETWORK',
};

/** "networks[1].tokens[0]: must be a token contract address" — every issue, with where it is. */
function describeIssues(error: z.ZodError, names: Record<string, string> = {}): string {
  return error.issues
    .map((issue) => {
      const raw = issue.path
        .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
        .join('')
        .replace(/^\./, '');
      const path = names[raw] ?? raw;
      return `${path || 'the configuration'}: ${issue.message}`;
    })
    .join('; ');
}
