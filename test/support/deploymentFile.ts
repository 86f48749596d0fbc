// A test chain's deployment file: the one way a worker or an API process is told its chain
// (AUTHCAP_CONFIG). The settings a case gives through the environment for the dev chain's file
// (AUTHCAP_CONFIRMATIONS, AUTHCAP_WS_URL set empty for no WebSocket, MERCHANT_PRIVATE_KEYS for more
// keys) are written in, as the dev stack does.
import type { Address } from 'viem';
import { writeDeploymentFile } from '../../devstack/deploymentFile.js';
import { networkOfChainId } from '../../runtime/deployment/schema.js';
import { readVariable } from '../../runtime/settings/read.js';

export interface TestNetwork {
  chainId: number;
  /** What the processes talk to (a fault proxy, or anvil). */
  rpcUrl: string;
  tokenAddress: Address;
}

/**
 * `<dir>/deployment.json` (0600) for one network, its first token the default.
 * AUTHCAP_WS_URL: unset, the node's own WebSocket; empty, none (new blocks polled); else that URL.
 */
export function writeTestDeployment(dir: string, network: TestNetwork, env: Record<string, string | undefined> = {}): string {
  const ws = env.AUTHCAP_WS_URL === undefined ? network.rpcUrl.replace(/^http/, 'ws') : env.AUTHCAP_WS_URL.trim();
  return writeDeploymentFile(dir, {
    networks: [
      {
        id: networkOfChainId(network.chainId),
        rpcUrls: [network.rpcUrl],
        ...(ws ? { wsUrl: ws } : {}),
        confirmations: readVariable('AUTHCAP_CONFIRMATIONS', env),
        tokens: [network.tokenAddress],
        // More keys when the case gives them (the loader refuses a named variable that is empty).
        merchantKeys: ['MERCHANT_PRIVATE_KEY', ...(env.MERCHANT_PRIVATE_KEYS?.trim() ? ['MERCHANT_PRIVATE_KEYS'] : [])],
      },
    ],
  });
}
