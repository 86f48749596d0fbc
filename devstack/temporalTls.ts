// Who may talk to the production shape's Temporal server, and as what. Two authorities, kept in
// <state dir>/temporal-tls (0700, every file 0600):
// - the client CA signs the frontend's server certificate and one client certificate per kind of
//   caller; the frontend requires one of these (mutual TLS), and the server's claim mapper
//   (devstack/temporal-server/claims.go) gives each the roles its OrganizationalUnits name;
// - the internode CA signs the one certificate the server's own services present to each other
//   (history, matching, internal-frontend, the system worker). Client certificates are not valid
//   there, so no caller can reach the unauthorized internal ports with one.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TLSConfig } from '@temporalio/client';
import { type CertificateFiles, ensureAuthority, ensureCertificate } from './certificates.js';

/** The kinds of caller, each with its own certificate. */
export type TemporalIdentity = 'worker' | 'api' | 'cli' | 'setup' | 'ui';
export const TEMPORAL_IDENTITIES: readonly TemporalIdentity[] = ['worker', 'api', 'cli', 'setup', 'ui'];

/** What the server's certificates name, and what clients check (IP and DNS, so either spelling verifies). */
const SERVER_HOSTS = ['127.0.0.1', 'localhost'];
export const TEMPORAL_SERVER_NAME = 'localhost';

/** The operator token of the production shape's Web UI, kept in the state dir (0600). */
export const UI_TOKEN_FILE = 'temporal-ui-token';

/** The Web UI's operator token: kept, or made at first start (32 random bytes, base64url). */
export function ensureUiToken(stateDir: string): string {
  const file = join(resolve(stateDir), UI_TOKEN_FILE);
  if (!existsSync(file)) writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  return readFileSync(file, 'utf8').trim();
}

/**
 * The grant that ties a certificate to the operator token (devstack/temporal-server/claims.go): its
 * other grants hold only for calls that carry the token in the authorization-extras header.
 */
export function operatorTokenGrant(token: string): string {
  return `operator-token-sha256:${createHash('sha256').update(token).digest('hex')}`;
}

/**
 * The least each caller needs, as grants "<namespace>:<permission>" ("temporal-system" is the whole
 * cluster), read by the server's claim mapper:
 * - worker, API, CLI: write on the namespace (workflows, updates, signals, visibility; no namespace changes);
 * - setup: admin on the namespace (registering it and its search attributes);
 * - the Web UI: read on the cluster (its namespace list and cluster info are cluster-scoped APIs) and
 *   signal on the namespace (an operator voids with the `void` signal); no terminate, reset, start or
 *   update; and all of it only with the operator token (uiToken), which the UI's gate
 *   (devstack/uiGate.ts) adds to what it forwards: the UI's own port, reached around the gate, reads nothing.
 */
export function identityGrants(namespace: string, uiToken?: string): Record<TemporalIdentity, string[]> {
  return {
    worker: [`${namespace}:write`],
    api: [`${namespace}:write`],
    cli: [`${namespace}:write`],
    setup: [`${namespace}:admin`],
    ui: ['temporal-system:read', `${namespace}:signal`, ...(uiToken ? [operatorTokenGrant(uiToken)] : [])],
  };
}

export interface TemporalTls {
  dir: string;
  /** What clients trust for the frontend (the client CA). */
  serverCaPath: string;
  serverName: string;
  /** The frontend's certificate, and the CA it accepts client certificates from. */
  frontend: CertificateFiles;
  clientCaPath: string;
  /** The services' certificate among themselves (server and client), and its own CA. */
  internode: CertificateFiles;
  internodeCaPath: string;
  clients: Record<TemporalIdentity, CertificateFiles>;
}

/** Where the files are (they exist once ensureTemporalTls has run for this state dir); absolute, as other processes read them. */
export function temporalTlsPaths(stateDir: string): TemporalTls {
  const dir = resolve(stateDir, 'temporal-tls');
  const files = (name: string) => ({ certPath: join(dir, `${name}.pem`), keyPath: join(dir, `${name}-key.pem`) });
  return {
    dir,
    serverCaPath: files('client-ca').certPath,
    serverName: TEMPORAL_SERVER_NAME,
    frontend: files('frontend'),
    clientCaPath: files('client-ca').certPath,
    internode: files('internode'),
    internodeCaPath: files('internode-ca').certPath,
    clients: Object.fromEntries(TEMPORAL_IDENTITIES.map((identity) => [identity, files(`client-${identity}`)])) as Record<TemporalIdentity, CertificateFiles>,
  };
}

/** Every authority and certificate for this state dir and namespace: kept, or made where missing, expiring or outdated. */
export async function ensureTemporalTls(stateDir: string, namespace: string): Promise<TemporalTls> {
  const paths = temporalTlsPaths(stateDir);
  const clientCa = await ensureAuthority(paths.dir, 'client-ca', 'authcap Temporal client CA');
  const internodeCa = await ensureAuthority(paths.dir, 'internode-ca', 'authcap Temporal internode CA');
  await ensureCertificate(clientCa, paths.dir, 'frontend', { commonName: 'temporal-frontend', usages: ['server'], hosts: SERVER_HOSTS });
  await ensureCertificate(internodeCa, paths.dir, 'internode', { commonName: 'temporal-internode', usages: ['server', 'client'], hosts: SERVER_HOSTS });
  const grants = identityGrants(namespace, ensureUiToken(stateDir));
  for (const identity of TEMPORAL_IDENTITIES) {
    await ensureCertificate(clientCa, paths.dir, `client-${identity}`, {
      commonName: `authcap-${identity}`,
      organizationalUnits: grants[identity],
      usages: ['client'],
    });
  }
  return paths;
}

/**
 * One more client certificate from the client CA, with the grants given (a namespace of its own for
 * `authcap temporal-setup`, say): kept under name like the others.
 */
export async function issueClientCertificate(tls: TemporalTls, name: string, grants: string[]): Promise<CertificateFiles> {
  const clientCa = await ensureAuthority(tls.dir, 'client-ca', 'authcap Temporal client CA');
  return ensureCertificate(clientCa, tls.dir, `client-${name}`, { commonName: `authcap-${name}`, organizationalUnits: grants, usages: ['client'] });
}

/** The identity's settings as @temporalio/envconfig (and the temporal CLI) read them from the environment. */
export function clientTlsEnv(tls: TemporalTls, identity: TemporalIdentity): Record<string, string> {
  return tlsEnvFor(tls, tls.clients[identity]);
}

export function tlsEnvFor(tls: TemporalTls, files: CertificateFiles): Record<string, string> {
  return {
    TEMPORAL_TLS: 'true',
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.serverCaPath,
    TEMPORAL_TLS_SERVER_NAME: tls.serverName,
    TEMPORAL_TLS_CLIENT_CERT_PATH: files.certPath,
    TEMPORAL_TLS_CLIENT_KEY_PATH: files.keyPath,
  };
}

/** The identity's TLS options for a @temporalio/client Connection made here (readiness, setup, tests). */
export function connectionTls(tls: TemporalTls, files: CertificateFiles): TLSConfig {
  return {
    serverRootCACertificate: readFileSync(tls.serverCaPath),
    serverNameOverride: tls.serverName,
    clientCertPair: { crt: readFileSync(files.certPath), key: readFileSync(files.keyPath) },
  };
}
