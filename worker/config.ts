// The worker's chain settings from the environment. The merchant key lives only here.
import type { Address, Hex } from 'viem';
import { parseAddress } from '../domain/address.js';
import type { ChainConfig } from '../activities/index.js';
import { loadDeployment } from '../runtime/deployment/load.js';
import { resolveDeployment, type ResolvedDeployment } from '../runtime/deployment/resolve.js';

/**
 * The worker's settings from a deployment configuration (AUTHCAP_CONFIG): its networks and tokens,
 * checked against their chains, and the policy every network shares from the environment. `chain`
 * names the first network's first token and key, for what still reads one (metrics, tests).
 */
export async function workerDeploymentFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<{ chain: ChainConfig; deployment: ResolvedDeployment }> {
  const deployment = await resolveDeployment(loadDeployment(env));
  const first = deployment.networks[0]!;
  return {
    deployment,
    chain: {
      ...chainPolicyFromEnv(env),
      rpcUrl: first.rpcUrls[0]!,
      wsUrl: first.wsUrl,
      tokenAddress: first.tokens[0]!.address,
      merchantPrivateKey: first.merchantPrivateKeys[0]!,
      merchantPrivateKeys: first.merchantPrivateKeys.slice(1),
      confirmations: first.confirmations,
    },
  };
}

/** The policy every network shares: validity windows, history and reconcile settings. */
function chainPolicyFromEnv(env: NodeJS.ProcessEnv) {
  return {
    validitySeconds: positiveInt(env.AUTHCAP_VALIDITY_SECONDS, 900, 'AUTHCAP_VALIDITY_SECONDS'),
    reconcileIntervalSeconds: reconcileInterval(env),
    maxValiditySeconds: positiveInt(env.AUTHCAP_MAX_VALIDITY_SECONDS, 7 * 24 * 3600, 'AUTHCAP_MAX_VALIDITY_SECONDS'),
    historyLimit: positiveInt(env.AUTHCAP_HISTORY_LIMIT, 2_000, 'AUTHCAP_HISTORY_LIMIT'),
    refundValiditySeconds: positiveInt(env.AUTHCAP_REFUND_VALIDITY_SECONDS, 300, 'AUTHCAP_REFUND_VALIDITY_SECONDS'),
  };
}

export function chainConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ChainConfig {
  const missing = ['RPC_URL', 'TOKEN_ADDRESS', 'MERCHANT_PRIVATE_KEY'].filter((name) => !env[name]);
  if (missing.length) throw new Error(`the worker needs ${missing.join(', ')} (npm start sets them for the dev stack)`);
  const key = env.MERCHANT_PRIVATE_KEY as string;
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new Error('MERCHANT_PRIVATE_KEY must be 32 bytes as 0x-prefixed hex');
  return {
    rpcUrl: env.RPC_URL as string,
    wsUrl: env.AUTHCAP_WS_URL ?? (env.RPC_URL as string).replace(/^http/, 'ws'),
    tokenAddress: parseAddress(env.TOKEN_ADDRESS, 'TOKEN_ADDRESS') as Address,
    merchantPrivateKey: key as Hex,
    merchantPrivateKeys: merchantKeys(env.MERCHANT_PRIVATE_KEYS),
    ...chainPolicyFromEnv(env),
    confirmations:
      env.AUTHCAP_CONFIRMATIONS === 'safe' || env.AUTHCAP_CONFIRMATIONS === 'finalized'
        ? env.AUTHCAP_CONFIRMATIONS
        : positiveInt(env.AUTHCAP_CONFIRMATIONS, 1, 'AUTHCAP_CONFIRMATIONS'),
  };
}

/** MERCHANT_PRIVATE_KEYS: more merchant keys, comma-separated (MERCHANT_PRIVATE_KEY stays the first). */
function merchantKeys(raw: string | undefined): Hex[] {
  if (!raw?.trim()) return [];
  return raw
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .map((k) => {
      if (!/^0x[0-9a-fA-F]{64}$/.test(k)) throw new Error('MERCHANT_PRIVATE_KEYS must be 32-byte 0x-prefixed hex keys separated by commas');
      return k as Hex;
    });
}

/**
 * How often an open authorization re-reads the chain by itself. Off by default: the log watcher reads
 * each block once for every open authorization and nudges the one whose nonce moved, and each reads
 * the chain at its deadline, so waiting costs nothing however many are open. With the watcher off
 * (AUTHCAP_WATCH=0) nobody would nudge, so the per-authorization check comes back at 15 s.
 */
function reconcileInterval(env: NodeJS.ProcessEnv): number {
  const raw = env.AUTHCAP_RECONCILE_SECONDS;
  if (raw === 'off' || raw === '0') return 0;
  const watcherOff = env.AUTHCAP_WATCH === '0' || env.AUTHCAP_WATCH === 'false';
  return positiveInt(raw, watcherOff ? 15 : 0, 'AUTHCAP_RECONCILE_SECONDS');
}

function positiveInt(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return value;
}

/** The watcher's settings: on unless AUTHCAP_WATCH=0; ws URL from AUTHCAP_WS_URL or the RPC URL. */
export function watcherConfigFromEnv(rpcUrl: string, stateDir: string, env: NodeJS.ProcessEnv = process.env) {
  if (env.AUTHCAP_WATCH === '0' || env.AUTHCAP_WATCH === 'false') return undefined;
  return {
    cursorFile: env.AUTHCAP_WATCHER_CURSOR ?? `${stateDir}/watcher-cursor.json`,
    wsUrl: env.AUTHCAP_WS_URL ?? rpcUrl.replace(/^http/, 'ws'),
  };
}
