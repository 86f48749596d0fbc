// The dev stack's deployment.json: what it writes for one or two dev networks is what the loader
// every process uses accepts, keys stay in the environment, and settings that do not apply are said.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEPLOYMENT_FILE, devDeploymentConfig, writeDeploymentFile } from '../../../devstack/deploymentFile.js';
import type { DevNetwork } from '../../../devstack/devNetworks.js';
import { readVariable } from '../../../runtime/settings/read.js';

const devNetworksFromEnv = (env: Record<string, string>) => readVariable('AUTHCAP_DEV_NETWORKS', env);
import { startNotices } from '../../../devstack/externalChain.js';
import { DeploymentConfigError, parseDeployment } from '../../../runtime/deployment/load.js';
import { scratchDirs } from '../../support/scratch.js';

const scratch = scratchDirs('deployment');

const usdc = `0x${'5f'.repeat(20)}` as const;
const euro = `0x${'e1'.repeat(20)}` as const;
const networks: DevNetwork[] = [
  { network: 'eip155:31337', chainId: 31337, name: 'Dev chain', rpcUrl: 'http://127.0.0.1:8545', tokens: [{ address: usdc, symbol: 'USDC', decimals: 6 }] },
  {
    network: 'eip155:31338',
    chainId: 31338,
    name: 'Dev chain 2',
    rpcUrl: 'http://127.0.0.1:8546',
    tokens: [
      { address: usdc, symbol: 'USDC', decimals: 6 },
      { address: euro, symbol: 'DEUR18', decimals: 18 },
    ],
  },
];
const key = (byte: string) => `0x${byte.repeat(32)}`;

describe("the dev stack's deployment.json", () => {
  it('lists both networks with their tokens, and loads', () => {
    const config = devDeploymentConfig(networks, { confirmations: 2, headFeed: true, moreMerchantKeys: false });
    const loaded = parseDeployment(JSON.stringify(config), 'deployment.json', { MERCHANT_PRIVATE_KEY: key('11') });
    expect(loaded.networks.map((n) => [n.id, n.name, n.tokens])).toEqual([
      ['eip155:31337', 'Dev chain', [usdc]],
      ['eip155:31338', 'Dev chain 2', [usdc, euro]],
    ]);
    expect(loaded.networks[1]).toMatchObject({
      rpcUrls: ['http://127.0.0.1:8546'],
      wsUrl: 'ws://127.0.0.1:8546',
      publicRpcUrls: ['http://127.0.0.1:8546'],
      confirmations: 2,
      merchantPrivateKeys: [key('11')],
    });
    // Keys are named, never written.
    expect(JSON.stringify(config)).not.toContain('11'.repeat(32));
    expect(config.networks.every((n) => JSON.stringify(n.merchantKeys) === '["MERCHANT_PRIVATE_KEY"]')).toBe(true);
  });

  it('names MERCHANT_PRIVATE_KEYS only when there are more keys: the loader refuses a named variable that is empty', () => {
    const more = devDeploymentConfig(networks, { confirmations: 1, headFeed: true, moreMerchantKeys: true });
    const env = { MERCHANT_PRIVATE_KEY: key('11'), MERCHANT_PRIVATE_KEYS: `${key('22')},${key('33')}` };
    expect(parseDeployment(JSON.stringify(more), 'f', env).networks.map((n) => n.merchantPrivateKeys)).toEqual([
      [key('11'), key('22'), key('33')],
      [key('11'), key('22'), key('33')],
    ]);
    expect(() => parseDeployment(JSON.stringify(more), 'f', { ...env, MERCHANT_PRIVATE_KEYS: '' })).toThrow(DeploymentConfigError);
  });

  it('leaves the WebSocket out when the head feed is off (AUTHCAP_WS_URL set empty)', () => {
    const config = devDeploymentConfig(networks.slice(0, 1), { confirmations: 1, headFeed: false, moreMerchantKeys: false });
    expect(config.networks[0]).not.toHaveProperty('wsUrl');
  });

  it('writes the file 0600 and refuses one the processes would refuse', () => {
    const dir = scratch();
    const file = writeDeploymentFile(dir, devDeploymentConfig(networks, { confirmations: 1, headFeed: true, moreMerchantKeys: false }));
    expect(file).toBe(join(dir, DEPLOYMENT_FILE));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).networks).toHaveLength(2);
    const twice = devDeploymentConfig([networks[0]!, networks[0]!], { confirmations: 1, headFeed: true, moreMerchantKeys: false });
    expect(() => writeDeploymentFile(dir, twice)).toThrow(/listed twice/);
  });
});

describe('AUTHCAP_DEV_NETWORKS and AUTHCAP_CONFIG at npm start', () => {
  it('takes 1 or 2 networks, nothing else', () => {
    expect(devNetworksFromEnv({})).toBe(1);
    expect(devNetworksFromEnv({ AUTHCAP_DEV_NETWORKS: '2' })).toBe(2);
    expect(() => devNetworksFromEnv({ AUTHCAP_DEV_NETWORKS: '3' })).toThrow(/must be 1 or 2, got "3"/);
  });

  it('says AUTHCAP_DEV_NETWORKS is ignored on your chain (AUTHCAP_CONFIG names it)', () => {
    const chain = { AUTHCAP_CONFIG: '/etc/authcap.json', AUTHCAP_DEMO_PAYER_KEYS: key('22') };
    expect(startNotices({ ...chain, AUTHCAP_DEV_NETWORKS: '2' })).toEqual([expect.stringMatching(/^AUTHCAP_DEV_NETWORKS is ignored on your chain/)]);
    expect(startNotices(chain)).toEqual([]);
    expect(startNotices({ AUTHCAP_DEV_NETWORKS: '2' })).toEqual([]);
  });
});
