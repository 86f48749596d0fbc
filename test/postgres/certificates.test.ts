// The production shape's certificates on disk: private files, kept across starts, made again only when
// missing, expiring, asking for other grants, or signed by an authority that was replaced.
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ensureAuthority, ensureCertificate, RENEW_BEFORE_MS } from '../../devstack/certificates.js';
import { ensureTemporalTls, TEMPORAL_IDENTITIES, UI_TOKEN_FILE } from '../../devstack/temporalTls.js';
import { scratchDirs } from '../support/scratch.js';

const scratch = scratchDirs('certs');

const DAY_MS = 24 * 3600 * 1000;
const mode = (path: string) => statSync(path).mode & 0o777;

describe('the Temporal certificates in the state dir', () => {
  it('makes every file 0600 in a 0700 folder, and keeps them on the next start', async () => {
    const stateDir = scratch();
    const tls = await ensureTemporalTls(stateDir, 'authcap');
    expect(mode(tls.dir)).toBe(0o700);
    const files = [tls.serverCaPath, tls.internodeCaPath, tls.frontend, tls.internode, ...TEMPORAL_IDENTITIES.map((id) => tls.clients[id])].flatMap((f) =>
      typeof f === 'string' ? [f] : [f.certPath, f.keyPath],
    );
    for (const file of files) expect(mode(file), file).toBe(0o600);
    const before = files.map((file) => readFileSync(file, 'utf8'));
    await ensureTemporalTls(stateDir, 'authcap');
    expect(files.map((file) => readFileSync(file, 'utf8'))).toEqual(before);
  });

  it("names 127.0.0.1 and localhost in the servers' certificates, and each caller's grants in its subject", async () => {
    const stateDir = scratch();
    const tls = await ensureTemporalTls(stateDir, 'authcap');
    const frontend = new X509Certificate(readFileSync(tls.frontend.certPath));
    expect(frontend.subjectAltName).toBe('IP Address:127.0.0.1, DNS:localhost');
    expect(frontend.checkIssued(new X509Certificate(readFileSync(tls.serverCaPath)))).toBe(true);
    const internode = new X509Certificate(readFileSync(tls.internode.certPath));
    expect(internode.checkIssued(new X509Certificate(readFileSync(tls.internodeCaPath)))).toBe(true);
    expect(new X509Certificate(readFileSync(tls.clients.worker.certPath)).subject).toBe('CN=authcap-worker\nOU=authcap:write');
    // The UI's grants hold only with the operator token (its SHA-256 in the subject; the token 0600 beside).
    const tokenFile = `${stateDir}/${UI_TOKEN_FILE}`;
    expect(mode(tokenFile)).toBe(0o600);
    const digest = createHash('sha256').update(readFileSync(tokenFile, 'utf8').trim()).digest('hex');
    expect(new X509Certificate(readFileSync(tls.clients.ui.certPath)).subject).toBe(
      `CN=authcap-ui\nOU=temporal-system:read\nOU=authcap:signal\nOU=operator-token-sha256:${digest}`,
    );
  });

  it("makes the UI's certificate again when its operator token is replaced", async () => {
    const stateDir = scratch();
    const tls = await ensureTemporalTls(stateDir, 'authcap');
    const before = readFileSync(tls.clients.ui.certPath, 'utf8');
    rmSync(`${stateDir}/${UI_TOKEN_FILE}`);
    await ensureTemporalTls(stateDir, 'authcap');
    const after = new X509Certificate(readFileSync(tls.clients.ui.certPath));
    expect(after.toString()).not.toBe(new X509Certificate(before).toString());
    const digest = createHash('sha256')
      .update(readFileSync(`${stateDir}/${UI_TOKEN_FILE}`, 'utf8').trim())
      .digest('hex');
    expect(after.subject).toContain(`OU=operator-token-sha256:${digest}`);
  });

  it('makes a certificate again when it nears its end, when its grants change, or when its authority is replaced', async () => {
    const dir = scratch();
    const now = new Date();
    const profile = { commonName: 'authcap-worker', organizationalUnits: ['authcap:write'], usages: ['client' as const] };
    const ca = await ensureAuthority(dir, 'ca', 'test CA', now);
    const issued = await ensureCertificate(ca, dir, 'worker', profile, now);
    const read = () => readFileSync(issued.certPath, 'utf8');
    const first = read();
    await ensureCertificate(ca, dir, 'worker', profile, new Date(now.getTime() + 100 * DAY_MS));
    expect(read()).toBe(first);
    const validTo = new Date(new X509Certificate(first).validTo).getTime();
    await ensureCertificate(ca, dir, 'worker', profile, new Date(validTo - RENEW_BEFORE_MS + DAY_MS));
    const renewed = read();
    expect(renewed).not.toBe(first);
    await ensureCertificate(ca, dir, 'worker', { ...profile, organizationalUnits: ['other:write'] }, now);
    expect(new X509Certificate(read()).subject).toBe('CN=authcap-worker\nOU=other:write');
    rmSync(ca.keyPath);
    const replaced = await ensureAuthority(dir, 'ca', 'test CA', now);
    await ensureCertificate(replaced, dir, 'worker', { ...profile, organizationalUnits: ['other:write'] }, now);
    expect(new X509Certificate(read()).verify(new X509Certificate(readFileSync(replaced.certPath)).publicKey)).toBe(true);
  });
});
