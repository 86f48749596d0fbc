// `npx authcap doctor` (and every CLI command) beside a running `npm start`: what the environment
// leaves unset is taken from the files the stack writes in its state dir (dev.json, deployment.json,
// codec-keys.json), so the CLI reaches the stack as its worker does, on the stack's own ports and
// state dir too. A state dir as the stack leaves it, without the stack.
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { devStackSettings } from '../../../client/cliDevStack.js';
import { devDeploymentConfig, writeDeploymentFile } from '../../../devstack/deploymentFile.js';
import type { DevNetwork } from '../../../devstack/devNetworks.js';
import type { DevJson } from '../../../devstack/stack.js';
import { devAccounts, extraMerchantKeys } from '../../../devstack/token.js';
import { ensureDevCodecKeys } from '../../../runtime/codec.js';
import { loadDeployment } from '../../../runtime/deployment/load.js';
import { deploymentCheck } from '../../../runtime/doctor/configChecks.js';
import { readSettings } from '../../../runtime/settings/read.js';
import { loadTemporalSettings } from '../../../runtime/temporal.js';
import { scratchDirs } from '../../support/scratch.js';

const scratch = scratchDirs('cli-dev-stack');

const network: DevNetwork = {
  network: 'eip155:31337',
  chainId: 31337,
  name: 'Dev chain',
  rpcUrl: 'http://127.0.0.1:18545',
  tokens: [{ address: `0x${'5f'.repeat(20)}`, symbol: 'USDC', decimals: 6 }],
};

/** What `npm start` leaves in its state dir: deployment.json, codec-keys.json and dev.json (the fields the CLI reads). */
function stackStateDir(devJson: Partial<DevJson> = {}, options: { merchantKeys?: number } = {}): string {
  const stateDir = join(scratch(), 'state');
  ensureDevCodecKeys(stateDir);
  const more = extraMerchantKeys((options.merchantKeys ?? 1) - 1).map((k) => k.privateKey);
  const configFile = writeDeploymentFile(stateDir, devDeploymentConfig([network], { confirmations: 1, headFeed: true, moreMerchantKeys: more.length > 0 }));
  const written: Partial<DevJson> = {
    // A stack started with TEMPORAL_PORT=17233.
    temporalAddress: '127.0.0.1:17233',
    temporalNamespace: 'default',
    temporalConfigFile: null,
    configFile,
    merchantKeyEnv: { MERCHANT_PRIVATE_KEY: devAccounts().merchant.privateKey, ...(more.length ? { MERCHANT_PRIVATE_KEYS: more.join(',') } : {}) },
    ...devJson,
  };
  writeFileSync(join(stateDir, 'dev.json'), JSON.stringify(written), { mode: 0o600 });
  return stateDir;
}

describe('the CLI beside npm start', () => {
  it("takes the stack's Temporal, deployment file, payload keys and merchant keys, as its worker gets them", () => {
    const stateDir = stackStateDir();
    const found = devStackSettings({}, stateDir);
    expect(found.from).toBe(stateDir);
    expect(found.env).toEqual({
      TEMPORAL_ADDRESS: '127.0.0.1:17233',
      TEMPORAL_NAMESPACE: 'default',
      AUTHCAP_CONFIG: join(stateDir, 'deployment.json'),
      AUTHCAP_CODEC_KEY_FILE: join(stateDir, 'codec-keys.json'),
      MERCHANT_PRIVATE_KEY: devAccounts().merchant.privateKey,
    });
  });

  it("is what the CLI, doctor included, then runs with: the deployment loads with its keys, Temporal is on the stack's port", () => {
    const stateDir = stackStateDir({}, { merchantKeys: 3 });
    // AUTHCAP_STATE_DIR as the stack was started with it (relative to where the CLI runs, as a user types it).
    const given = { AUTHCAP_STATE_DIR: relative(process.cwd(), stateDir) };
    const env = { ...given, ...devStackSettings(given, readSettings('cli', given).AUTHCAP_STATE_DIR).env };
    expect(() => readSettings('cli', env)).not.toThrow();
    const loaded = loadDeployment(env);
    expect(loaded.networks[0]!.merchantPrivateKeys).toHaveLength(3);
    // The doctor's line that failed beside npm start ("set AUTHCAP_CONFIG, or RPC_URL, …").
    const doctor = deploymentCheck(env);
    expect(doctor.check.status).toBe('ok');
    expect(doctor.keysLoaded).toBe(true);
    const temporal = loadTemporalSettings({}, env);
    expect(temporal.connectionOptions.address).toBe('127.0.0.1:17233');
    expect(temporal.dataConverter).toBeDefined();
  });

  it('leaves alone what the environment says: its own Temporal, deployment file and keys win', () => {
    const stateDir = stackStateDir();
    const found = (env: NodeJS.ProcessEnv) => devStackSettings(env, stateDir).env;
    expect(found({ TEMPORAL_ADDRESS: 'temporal.example:7233' })).not.toHaveProperty('TEMPORAL_ADDRESS');
    expect(found({ TEMPORAL_ADDRESS: 'temporal.example:7233' })).not.toHaveProperty('TEMPORAL_NAMESPACE');
    expect(found({ TEMPORAL_CONFIG_FILE: '/etc/temporal.toml' })).not.toHaveProperty('TEMPORAL_ADDRESS');
    expect(found({ TEMPORAL_NAMESPACE: 'payments' })).toMatchObject({ TEMPORAL_ADDRESS: '127.0.0.1:17233' });
    expect(found({ TEMPORAL_NAMESPACE: 'payments' })).not.toHaveProperty('TEMPORAL_NAMESPACE');
    // Another deployment file: not the stack's, so not the stack's keys either.
    const other = found({ AUTHCAP_CONFIG: '/etc/authcap/deployment.json' });
    expect(other).not.toHaveProperty('AUTHCAP_CONFIG');
    expect(other).not.toHaveProperty('MERCHANT_PRIVATE_KEY');
    expect(found({ MERCHANT_PRIVATE_KEY: `0x${'77'.repeat(32)}` })).not.toHaveProperty('MERCHANT_PRIVATE_KEY');
    expect(found({ AUTHCAP_CODEC_KEYS: 'k1:abc' })).not.toHaveProperty('AUTHCAP_CODEC_KEY_FILE');
    expect(found({ AUTHCAP_CODEC: 'off' })).not.toHaveProperty('AUTHCAP_CODEC_KEY_FILE');
  });

  it("the production shape: the stack's temporal.toml profile (address, namespace, the CLI's certificate)", () => {
    const stateDir = stackStateDir({ temporalConfigFile: '/state/temporal.toml' });
    const env = devStackSettings({}, stateDir).env;
    expect(env.TEMPORAL_CONFIG_FILE).toBe('/state/temporal.toml');
    expect(env).not.toHaveProperty('TEMPORAL_ADDRESS');
  });

  it("on an operator's chain the keys stay theirs: dev.json holds none, so none is taken", () => {
    const stateDir = stackStateDir({ merchantKeyEnv: null });
    const env = devStackSettings({}, stateDir).env;
    expect(env.AUTHCAP_CONFIG).toBeDefined();
    expect(Object.keys(env).filter((name) => name.startsWith('MERCHANT_'))).toEqual([]);
  });

  it('takes nothing where no stack wrote, and nothing from a dev.json it cannot read', () => {
    expect(devStackSettings({}, scratch())).toEqual({ env: {} });
    const broken = scratch();
    writeFileSync(join(broken, 'dev.json'), '{"temporalAddress": ');
    expect(devStackSettings({}, broken)).toEqual({ env: {} });
  });
});
