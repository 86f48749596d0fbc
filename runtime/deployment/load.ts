// Reads the deployment configuration once per process: the file named by AUTHCAP_CONFIG, the one
// way a process is told its networks and tokens (`npm start` writes one in its state dir). What comes
// back is checked against its schema, with `${VARIABLE}` references and keys resolved.
import { readFileSync } from 'node:fs';
import type { Hex } from 'viem';
import type { z } from 'zod';
import { deploymentSchema, type NetworkConfig } from './schema.js';

export class DeploymentConfigError extends Error {
  override name = 'DeploymentConfigError';
}

/** A network as a process runs it: URLs read from the environment, keys parsed. */
export interface LoadedNetwork extends Omit<NetworkConfig, 'merchantKeys'> {
  merchantPrivateKeys: Hex[];
}

export interface LoadedDeployment {
  /** The file it came from, for messages. */
  source: string;
  networks: LoadedNetwork[];
}

const KEY = /^0x[0-9a-fA-F]{64}$/;

export interface LoadOptions {
  /** Read the merchant keys (the worker); processes that never sign (API, CLI) leave them. */
  keys?: boolean;
}

/** What to do when no file is named. */
export const NO_DEPLOYMENT_FILE = 'set AUTHCAP_CONFIG to the deployment file (docs/configuration.md; `npm start` writes one in its state dir)';

// This module is the one reader of the deployment file: the worker, the API, the CLI and the dev
// stack take their networks from here.
export function loadDeployment(env: NodeJS.ProcessEnv = process.env, options: LoadOptions = {}): LoadedDeployment {
  const file = env.AUTHCAP_CONFIG?.trim();
  if (!file) throw new DeploymentConfigError(NO_DEPLOYMENT_FILE);
  return fromFile(file, env, options);
}

/** Whether the environment names a deployment file (AUTHCAP_CONFIG). */
export function deploymentConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!env.AUTHCAP_CONFIG?.trim();
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

/**
 * The environment variables a deployment file names: its `merchantKeys` (read by the worker alone)
 * and the `${VARIABLE}` its URLs are written as (read by every process). A process that starts
 * others (the dev stack) hands each of them these, and no more.
 */
export function variablesNamedBy(file: string): { keys: string[]; urls: string[] } {
  const parsed = deploymentSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new DeploymentConfigError(`${file}: ${describeIssues(parsed.error)}`);
  const named = (value: string | undefined) => (value ? (/^\$\{([A-Z_][A-Z0-9_]*)\}$/.exec(value)?.[1] ?? []) : []);
  const { networks } = parsed.data;
  return {
    keys: [...new Set(networks.flatMap((n) => n.merchantKeys))],
    urls: [...new Set(networks.flatMap((n) => [...n.rpcUrls, n.wsUrl].flatMap(named)))],
  };
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

/** "networks[1].tokens[0]: must be a token contract address" — every issue, with where it is. */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path
        .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
        .join('')
        .replace(/^\./, '');
      return `${path || 'the configuration'}: ${issue.message}`;
    })
    .join('; ');
}
