// A small private PKI on disk: certificate authorities and the certificates they sign, made with
// @peculiar/x509 over Node's WebCrypto (ECDSA P-256: native key generation and signing, no
// hand-rolled ASN.1, no openssl binary to install). Files are kept and reused across starts; each is
// made again only when it is missing, expires within RENEW_BEFORE_MS, no longer matches what is
// asked of it, or was signed by an authority that has since been replaced.
import 'reflect-metadata'; // @peculiar/x509 resolves its parts through tsyringe, which needs a Reflect metadata polyfill
import { createPrivateKey, createPublicKey, randomBytes, webcrypto } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

const DAY_MS = 24 * 3600 * 1000;
const AUTHORITY_LIFETIME_MS = 10 * 365 * DAY_MS;
const LEAF_LIFETIME_MS = 365 * DAY_MS;
/** A certificate closer than this to its end is made again at the next start. */
export const RENEW_BEFORE_MS = 30 * DAY_MS;
const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-256' } as const;

export interface CertificateFiles {
  certPath: string;
  keyPath: string;
}

/** An authority loaded for signing. */
export interface Authority extends CertificateFiles {
  certificate: x509.X509Certificate;
  signingKey: webcrypto.CryptoKey;
}

export interface LeafProfile {
  commonName: string;
  /** One OrganizationalUnit each: the Temporal server's claim mapper reads grants from them. */
  organizationalUnits?: string[];
  /** serverAuth, clientAuth or both (internode certificates are both). */
  usages: ('server' | 'client')[];
  /** Subject alternative names: IP addresses and DNS names the server answers on. */
  hosts?: string[];
}

/** The authority `name` in dir (name.pem, name-key.pem): kept, or made anew (it then replaces every certificate it signed). */
export async function ensureAuthority(dir: string, name: string, commonName: string, now = new Date()): Promise<Authority> {
  const files = filesOf(privateDir(dir), name);
  const kept = readKept(files);
  if (kept && kept.certificate.subject === `CN=${commonName}` && !expiring(kept.certificate, now) && (await kept.certificate.isSelfSigned())) {
    return { ...files, certificate: kept.certificate, signingKey: await importSigningKey(kept.keyPem) };
  }
  const keys = await generateKeys();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [commonName] }],
    notBefore: backdated(now),
    notAfter: new Date(now.getTime() + AUTHORITY_LIFETIME_MS),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  await write(files, certificate, keys.privateKey);
  return { ...files, certificate, signingKey: keys.privateKey };
}

/** The certificate `name` in dir, signed by authority for profile: kept, or made anew. */
export async function ensureCertificate(authority: Authority, dir: string, name: string, profile: LeafProfile, now = new Date()): Promise<CertificateFiles> {
  const files = filesOf(privateDir(dir), name);
  const kept = readKept(files);
  if (kept && !expiring(kept.certificate, now) && matches(kept.certificate, profile) && (await signedBy(kept.certificate, authority))) return files;
  const keys = await generateKeys();
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: subjectOf(profile),
    issuer: authority.certificate.subjectName,
    notBefore: backdated(now),
    // Never past the authority's own end: a chain is only as valid as its shortest link.
    notAfter: new Date(Math.min(now.getTime() + LEAF_LIFETIME_MS, authority.certificate.notAfter.getTime())),
    publicKey: keys.publicKey,
    signingKey: authority.signingKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(extendedKeyUsages(profile)),
      ...(profile.hosts?.length
        ? [new x509.SubjectAlternativeNameExtension(profile.hosts.map((host) => ({ type: isIP(host) ? 'ip' : 'dns', value: host })))]
        : []),
      await x509.AuthorityKeyIdentifierExtension.create(authority.certificate),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  await write(files, certificate, keys.privateKey);
  return files;
}

function filesOf(dir: string, name: string): CertificateFiles {
  return { certPath: join(dir, `${name}.pem`), keyPath: join(dir, `${name}-key.pem`) };
}

/** The certificate and its key as kept, if both are there, readable and belong together. */
function readKept(files: CertificateFiles): { certificate: x509.X509Certificate; keyPem: string } | undefined {
  if (!existsSync(files.certPath) || !existsSync(files.keyPath)) return undefined;
  try {
    const certificate = new x509.X509Certificate(readFileSync(files.certPath, 'utf8'));
    const keyPem = readFileSync(files.keyPath, 'utf8');
    const keyPublic = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
    return Buffer.from(certificate.publicKey.rawData).equals(keyPublic) ? { certificate, keyPem } : undefined;
  } catch {
    return undefined;
  }
}

function expiring(certificate: x509.X509Certificate, now: Date): boolean {
  return certificate.notAfter.getTime() - now.getTime() < RENEW_BEFORE_MS || certificate.notBefore.getTime() > now.getTime();
}

function subjectOf(profile: LeafProfile): x509.JsonName {
  return [{ CN: [profile.commonName] }, ...(profile.organizationalUnits ?? []).map((unit) => ({ OU: [unit] }))];
}

/** The kept certificate says what the profile asks for now (grants and hosts can change between starts). */
function matches(certificate: x509.X509Certificate, profile: LeafProfile): boolean {
  const sameSubject = JSON.stringify(certificate.subjectName.toJSON()) === JSON.stringify(subjectOf(profile));
  const names = certificate.getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON() ?? [];
  const sameHosts = JSON.stringify(names.map((n) => n.value)) === JSON.stringify(profile.hosts ?? []);
  const usages = certificate.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? [];
  return sameSubject && sameHosts && JSON.stringify(usages) === JSON.stringify(extendedKeyUsages(profile));
}

function extendedKeyUsages(profile: LeafProfile): string[] {
  return profile.usages.map((usage) => (usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth));
}

async function signedBy(certificate: x509.X509Certificate, authority: Authority): Promise<boolean> {
  return certificate.issuer === authority.certificate.subject && (await certificate.verify({ publicKey: authority.certificate, signatureOnly: true }));
}

function generateKeys(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']) as Promise<webcrypto.CryptoKeyPair>;
}

async function importSigningKey(keyPem: string): Promise<webcrypto.CryptoKey> {
  const der = createPrivateKey(keyPem).export({ type: 'pkcs8', format: 'der' });
  return webcrypto.subtle.importKey('pkcs8', der, KEY_ALGORITHM, false, ['sign']) as Promise<webcrypto.CryptoKey>;
}

/** Positive, 16 random bytes: unique without bookkeeping. */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0]! &= 0x7f;
  return bytes.toString('hex');
}

/** A minute in the past: another process's clock a little behind still accepts it. */
function backdated(now: Date): Date {
  return new Date(now.getTime() - 60_000);
}

/** Key first, then the certificate, each through a 0600 temporary file renamed into place. */
async function write(files: CertificateFiles, certificate: x509.X509Certificate, privateKey: webcrypto.CryptoKey): Promise<void> {
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', privateKey);
  writePrivate(files.keyPath, x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'));
  writePrivate(files.certPath, certificate.toString('pem'));
}

function writePrivate(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text.endsWith('\n') ? text : `${text}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

/** A folder only this user can enter (made so if it was not). */
export function privateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return dir;
}
