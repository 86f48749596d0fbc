// The worker's chain settings from the environment. The merchant key lives only here.
import type { Address, Hex } from 'viem';
import { parseAddress } from '../domain/address.js';
import type { ChainConfig } from '../activities/index.js';
import { loadDeployment } from '../runtime/deployment/load.js';
import { resolveDeployment, type ResolvedDeployment } from '../runtime/deployment/resolve.js';
import { readVariable } from '../runtime/settings/read.js';
import type { Settings } from '../runtime/settings/catalog.js';

type Env = NodeJS.ProcessEnv;
/** The worker settings the chain policy is made of (readSettings('worker') has them all). */
export type ChainPolicySettings = Pick<
  Settings<'worker'>,
  | 'AUTHCAP_VALIDITY_SECONDS'
  | 'AUTHCAP_MAX_VALIDITY_SECONDS'
  | 'AUTHCAP_HISTORY_LIMIT'
  | 'AUTHCAP_REFUND_VALIDITY_SECONDS'
  | 'AUTHCAP_RECONCILE_SECONDS'
  | 'AUTHCAP_WATCH'
>;

/**
 * The worker's settings from a deployment configuration (AUTHCAP_CONFIG): its networks and tokens,
 * checked against their chains, and the policy every network shares from the environment. `chain`
 * names the first network's first token and key, for what still reads one (metrics, tests).
 */
export async function workerDeploymentFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  settings: ChainPolicySettings = policySettingsOf(env),
): Promise<{ chain: ChainConfig; deployment: ResolvedDeployment }> {
  const deployment = await resolveDeployment(loadDeployment(env));
  const first = deployment.networks[0]!;
  return {
    deployment,
    chain: {
      ...chainPolicy(settings),
      rpcUrl: first.rpcUrls[0]!,
      wsUrl: first.wsUrl,
      tokenAddress: first.tokens[0]!.address,
      merchantPrivateKey: first.merchantPrivateKeys[0]!,
      merchantPrivateKeys: first.merchantPrivateKeys.slice(1),
      confirmations: first.confirmations,
    },
  };
}

/** The policy settings alone, each through its catalog rule (for callers that pass an env). */
function policySettingsOf(env: Env): ChainPolicySettings {
  return {
    AUTHCAP_VALIDITY_SECONDS: readVariable('AUTHCAP_VALIDITY_SECONDS', env),
    AUTHCAP_MAX_VALIDITY_SECONDS: readVariable('AUTHCAP_MAX_VALIDITY_SECONDS', env),
    AUTHCAP_HISTORY_LIMIT: readVariable('AUTHCAP_HISTORY_LIMIT', env),
    AUTHCAP_REFUND_VALIDITY_SECONDS: readVariable('AUTHCAP_REFUND_VALIDITY_SECONDS', env),
    AUTHCAP_RECONCILE_SECONDS: readVariable('AUTHCAP_RECONCILE_SECONDS', env),
    AUTHCAP_WATCH: readVariable('AUTHCAP_WATCH', env),
  };
}

/** The policy every network shares: validity windows, history and reconcile settings. */
function chainPolicy(settings: ChainPolicySettings) {
  return {
    validitySeconds: settings.AUTHCAP_VALIDITY_SECONDS,
    reconcileIntervalSeconds: reconcileInterval(settings),
    maxValiditySeconds: settings.AUTHCAP_MAX_VALIDITY_SECONDS,
    historyLimit: settings.AUTHCAP_HISTORY_LIMIT,
    refundValiditySeconds: settings.AUTHCAP_REFUND_VALIDITY_SECONDS,
  };
}

export function chainConfigFromEnv(env: NodeJS.ProcessEnv = process.env, settings: ChainPolicySettings = policySettingsOf(env)): ChainConfig {
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
    ...chainPolicy(settings),
    confirmations: readVariable('AUTHCAP_CONFIRMATIONS', env),
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
function reconcileInterval(settings: Pick<ChainPolicySettings, 'AUTHCAP_RECONCILE_SECONDS' | 'AUTHCAP_WATCH'>): number {
  return settings.AUTHCAP_RECONCILE_SECONDS ?? (settings.AUTHCAP_WATCH ? 0 : 15);
}

/** The watcher's settings: on unless AUTHCAP_WATCH=0; ws URL from AUTHCAP_WS_URL or the RPC URL. */
export function watcherConfigFromEnv(
  rpcUrl: string,
  stateDir: string,
  env: NodeJS.ProcessEnv = process.env,
  settings: Pick<Settings<'worker'>, 'AUTHCAP_WATCH' | 'AUTHCAP_WATCHER_CURSOR' | 'AUTHCAP_WS_URL'> = {
    AUTHCAP_WATCH: readVariable('AUTHCAP_WATCH', env),
    AUTHCAP_WATCHER_CURSOR: readVariable('AUTHCAP_WATCHER_CURSOR', env),
    AUTHCAP_WS_URL: readVariable('AUTHCAP_WS_URL', env),
  },
) {
  if (!settings.AUTHCAP_WATCH) return undefined;
  return {
    cursorFile: settings.AUTHCAP_WATCHER_CURSOR ?? `${stateDir}/watcher-cursor.json`,
    wsUrl: settings.AUTHCAP_WS_URL ?? rpcUrl.replace(/^http/, 'ws'),
  };
}
