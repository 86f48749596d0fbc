// API keys with roles, kept hashed in a JSON file (0600). A key reads `ak_<id>_<secret>`: the id finds
// the record, the secret's SHA-256 is compared in constant time. A plain hash (not a slow KDF) is
// right here because the secret is 32 random bytes, not a password: nothing to brute-force.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** `facilitator`: an x402 resource server's key, which may only verify and settle payments (/x402). */
export const apiRoles = ['order-service', 'operator', 'facilitator'] as const;
export type ApiRole = (typeof apiRoles)[number];

export interface ApiKeyRecord {
  id: string;
  role: ApiRole;
  label: string;
  createdAt: string;
  revokedAt: string | null;
}

interface StoredKey extends ApiKeyRecord {
  /** SHA-256 of the secret part, hex. */
  hash: string;
}

export interface Caller {
  id: string;
  role: ApiRole;
}

const KEY_FORMAT = /^ak_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const sha256 = (text: string) => createHash('sha256').update(text).digest();

export class ApiKeyStore {
  private keys: StoredKey[] = [];
  private loadedMtime = -1;
  private checkedAt = 0;

  private constructor(
    private readonly file: string,
    private readonly given: { key: string; caller: Caller }[],
  ) {
    this.reload();
  }

  /**
   * Keys kept in `file` (created on the first `create`); `apiKey`, the process's AUTHCAP_API_KEY
   * (one key handed out as a secret variable), works as an order-service key beside them.
   */
  static open(file: string, options: { apiKey?: string } = {}): ApiKeyStore {
    return new ApiKeyStore(file, options.apiKey ? [{ key: options.apiKey, caller: { id: 'env', role: 'order-service' } }] : []);
  }

  /** The key file of a process's settings: AUTHCAP_KEYS_FILE, else `api-keys.json` in its state dir. */
  static fileOf(settings: { AUTHCAP_KEYS_FILE?: string; AUTHCAP_STATE_DIR: string }): string {
    return settings.AUTHCAP_KEYS_FILE ?? join(settings.AUTHCAP_STATE_DIR, 'api-keys.json');
  }

  create(role: ApiRole, label = ''): { key: string; record: ApiKeyRecord } {
    if (!apiRoles.includes(role)) throw new Error(`role must be one of ${apiRoles.join(', ')}`);
    this.reload(true);
    const id = randomBytes(6).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const record: StoredKey = { id, role, label, createdAt: new Date().toISOString(), revokedAt: null, hash: sha256(secret).toString('hex') };
    this.keys.push(record);
    this.save();
    return { key: `ak_${id}_${secret}`, record: publicRecord(record) };
  }

  list(): ApiKeyRecord[] {
    this.reload(true);
    return this.keys.map(publicRecord);
  }

  revoke(id: string): boolean {
    this.reload(true);
    const record = this.keys.find((k) => k.id === id && !k.revokedAt);
    if (!record) return false;
    record.revokedAt = new Date().toISOString();
    this.save();
    return true;
  }

  authenticate(presented: string | undefined): Caller | undefined {
    if (!presented) return undefined;
    for (const { key, caller } of this.given) if (timingSafeEqual(sha256(presented), sha256(key))) return caller;
    const match = KEY_FORMAT.exec(presented);
    if (!match) return undefined;
    this.reload();
    const record = this.keys.find((k) => k.id === match[1]);
    if (!record || record.revokedAt) return undefined;
    return timingSafeEqual(sha256(match[2]!), Buffer.from(record.hash, 'hex')) ? { id: record.id, role: record.role } : undefined;
  }

  /** Re-reads the file when it changed (at most once a second), so `authcap keys create` applies at once. */
  private reload(force = false): void {
    const now = Date.now();
    if (!force && now - this.checkedAt < 1_000) return;
    this.checkedAt = now;
    if (!existsSync(this.file)) {
      this.keys = [];
      return;
    }
    const mtime = statSync(this.file).mtimeMs;
    if (!force && mtime === this.loadedMtime) return;
    const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as { keys?: StoredKey[] };
    this.keys = parsed.keys ?? [];
    this.loadedMtime = mtime;
  }

  private save(): void {
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const staging = `${this.file}.${process.pid}.tmp`;
    writeFileSync(staging, `${JSON.stringify({ keys: this.keys }, null, 2)}\n`, { mode: 0o600 });
    chmodSync(staging, 0o600);
    renameSync(staging, this.file);
    this.loadedMtime = statSync(this.file).mtimeMs;
  }
}

function publicRecord(record: StoredKey): ApiKeyRecord {
  const { hash: _hash, ...rest } = record;
  return rest;
}

/** The dev stack's keys, one per role (older keys labelled "dev" are revoked); plaintext goes to dev.json only. */
export function createDevKeys(store: ApiKeyStore): { apiKey: string; operatorApiKey: string; facilitatorApiKey: string } {
  for (const record of store.list()) if (record.label === 'dev' && !record.revokedAt) store.revoke(record.id);
  return {
    apiKey: store.create('order-service', 'dev').key,
    operatorApiKey: store.create('operator', 'dev').key,
    facilitatorApiKey: store.create('facilitator', 'dev').key,
  };
}
