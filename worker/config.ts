// The worker's chain settings: the deployment file (AUTHCAP_CONFIG) and the policy from its settings.
// The merchant keys live only here.
import type { Address } from 'viem';
import type { ChainConfig, ChainPolicy } from '../activities/index.js';
import { loadDeployment, type LoadedNetwork } from '../runtime/deployment/load.js';
import { resolveDeployment, type ResolvedDeployment } from '../runtime/deployment/resolve.js';
import type { Settings } from '../runtime/settings/catalog.js';

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
 * The worker's deployment (its settings' AUTHCAP_CONFIG): its networks and tokens, checked against
 * their chains, with the merchant keys from the variables the file names in `env` (names of the
 * operator's choosing, which no catalog lists), and the policy every network shares.
 */
export async function workerDeployment(
  settings: ChainPolicySettings & Pick<Settings<'worker'>, 'AUTHCAP_CONFIG'>,
  env: NodeJS.ProcessEnv,
): Promise<{ policy: ChainPolicy; deployment: ResolvedDeployment }> {
  const loaded = loadDeployment({ ...env, AUTHCAP_CONFIG: settings.AUTHCAP_CONFIG });
  // Each network is its own failure domain: one whose node does not answer now is served once it does.
  const deployment = await resolveDeployment(loaded, { degraded: true });
  return { deployment, policy: chainPolicyOf(settings) };
}

/**
 * ChainConfig of a network's first token and keys (a loaded deployment's first network, or the dev
 * chain's before its file is written), with the policy every network shares.
 */
export function chainConfigOf(
  first: Pick<LoadedNetwork, 'rpcUrls' | 'wsUrl' | 'tokens' | 'merchantPrivateKeys' | 'confirmations'>,
  settings: ChainPolicySettings,
): ChainConfig {
  return {
    ...chainPolicyOf(settings),
    rpcUrl: first.rpcUrls[0]!,
    wsUrl: first.wsUrl,
    tokenAddress: first.tokens[0]! as Address,
    merchantPrivateKey: first.merchantPrivateKeys[0]!,
    merchantPrivateKeys: first.merchantPrivateKeys.slice(1),
    confirmations: first.confirmations,
  };
}

/** The policy every network shares: validity windows, history and reconcile settings. */
export function chainPolicyOf(settings: ChainPolicySettings): ChainPolicy {
  return {
    validitySeconds: settings.AUTHCAP_VALIDITY_SECONDS,
    reconcileIntervalSeconds: reconcileInterval(settings),
    maxValiditySeconds: settings.AUTHCAP_MAX_VALIDITY_SECONDS,
    historyLimit: settings.AUTHCAP_HISTORY_LIMIT,
    refundValiditySeconds: settings.AUTHCAP_REFUND_VALIDITY_SECONDS,
  };
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
