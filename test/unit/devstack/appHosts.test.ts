// A simulated host of the production shape (devstack/appProcesses.ts prepareHost): its own state dir
// and HOME, every file its process reads copied in (0600) and named by an absolute path, the API key
// file kept in sync.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiHostFiles, prepareHost } from '../../../devstack/appProcesses.js';
import { temporalTlsPaths } from '../../../devstack/temporalTls.js';
import { eventually } from '../../faults/harness.js';

describe('prepareHost', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'authcap-hosts-'));
  afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

  it('gives each host its own dir and copies of what it reads, nothing pointing back at the shared state dir', async () => {
    const tls = temporalTlsPaths(stateDir);
    mkdirSync(tls.dir, { recursive: true });
    for (const file of [tls.serverCaPath, tls.clients.api.certPath, tls.clients.api.keyPath]) writeFileSync(file, `pem of ${file}`);
    writeFileSync(join(stateDir, 'deployment.json'), '{"networks":[]}');
    writeFileSync(join(stateDir, 'api-keys.json'), '{"keys":[]}');
    const files = apiHostFiles(stateDir);
    const host = prepareHost({ stateDir, name: 'api-1', configFile: join(stateDir, 'deployment.json'), tls: { tls, identity: 'api' }, files });
    const other = prepareHost({ stateDir, name: 'api-2', files });
    try {
      expect(host.dir).toBe(join(stateDir, 'hosts', 'api-1'));
      expect(other.dir).not.toBe(host.dir);
      expect(host.env).toMatchObject({ AUTHCAP_STATE_DIR: host.dir, HOME: host.dir, AUTHCAP_CONFIG: join(host.dir, 'deployment.json'), TEMPORAL_TLS: 'true' });
      for (const [name, value] of Object.entries(host.env)) {
        if (name.endsWith('_PATH') || name === 'AUTHCAP_CONFIG') expect(value.startsWith(`${host.dir}/`), name).toBe(true);
      }
      expect(readFileSync(host.env.TEMPORAL_TLS_CLIENT_KEY_PATH!, 'utf8')).toBe(`pem of ${tls.clients.api.keyPath}`);
      expect(statSync(host.env.TEMPORAL_TLS_CLIENT_KEY_PATH!).mode & 0o777).toBe(0o600);
      // One checkout secret for every API host, so a link one hands out is good on the others.
      expect(readFileSync(join(host.dir, 'checkout-secret'), 'utf8')).toBe(readFileSync(join(other.dir, 'checkout-secret'), 'utf8'));
      // A key made after the start (`authcap keys create`) reaches every host.
      writeFileSync(join(stateDir, 'api-keys.json'), '{"keys":["new"]}');
      const synced = await eventually(
        async () => readFileSync(join(other.dir, 'api-keys.json'), 'utf8'),
        (text) => text.includes('new'),
        5_000,
      );
      expect(synced).toBe('{"keys":["new"]}');
    } finally {
      host.stop();
      other.stop();
    }
  });
});
