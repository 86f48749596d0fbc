// Idempotency-Key for POSTs, as Stripe does it: the same key and the same request replay the first
// answer (even after the authorization moved on); the same key with another request is refused.
// FileIdempotencyStore keeps them in files under one directory: durable across restarts and shared
// by every API process on the host (the dev stack's default). API processes on several hosts share
// PostgresIdempotencyStore (idempotencyPostgres.ts) instead.
import { createHash } from 'node:crypto';
import { mkdirSync, openSync, closeSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';

export interface StoredResponse {
  status: number;
  body: unknown;
}

/**
 * A database answers later, files at once: the router awaits either, and the file store keeps its
 * synchronous answers for the callers (and tests) that read them directly.
 */
export type Awaitable<T> = T | Promise<T>;

export type IdempotencyClaim =
  | { kind: 'new'; complete(response: StoredResponse): Awaitable<void>; release(): Awaitable<void> }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'reused' }
  | { kind: 'in_progress' };

export interface IdempotencyStore {
  /** `fingerprint`: the request as fingerprintOf sees it; the same key with another one is `reused`. */
  claim(scope: string, key: string, fingerprint: string): Awaitable<IdempotencyClaim>;
  /** Lets go of what the store holds open (a connection pool). */
  close?(): Promise<void>;
}

interface Entry {
  fingerprint: string;
  createdAt: number;
  /** Who holds a pending claim: a claim of a process that died is taken over at once. */
  owner?: { host: string; pid: number };
  response?: StoredResponse;
}

function ownerAlive(owner: Entry['owner']): boolean {
  if (!owner || owner.host !== hostname()) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Answers are kept this long (Stripe keeps them 24 h). */
export const KEEP_MS = 24 * 3600 * 1000;
/** A pending claim older than this belonged to an API process that died mid-request (a request lasts at most 60 s). */
export const STALE_PENDING_MS = 120 * 1000;

export class FileIdempotencyStore implements IdempotencyStore {
  private lastSweep = 0;

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  claim(scope: string, key: string, fingerprint: string): IdempotencyClaim {
    this.sweep();
    const file = join(this.dir, `${createHash('sha256').update(`${scope}\u0000${key}`).digest('hex')}.json`);
    const entry: Entry = { fingerprint, createdAt: Date.now(), owner: { host: hostname(), pid: process.pid } };
    if (!this.create(file, entry)) {
      const existing = this.read(file);
      const expired = !existing || Date.now() - existing.createdAt > KEEP_MS;
      const abandoned = existing && !existing.response && (Date.now() - existing.createdAt > STALE_PENDING_MS || !ownerAlive(existing.owner));
      if (!expired && !abandoned) {
        if (existing.fingerprint !== fingerprint) return { kind: 'reused' };
        return existing.response ? { kind: 'replay', response: existing.response } : { kind: 'in_progress' };
      }
      this.write(file, entry);
    }
    return {
      kind: 'new',
      complete: (response) => this.write(file, { ...entry, response }),
      release: () => {
        try {
          unlinkSync(file);
        } catch {
          // already gone
        }
      },
    };
  }

  /** Atomic claim: only one process creates the file. */
  private create(file: string, entry: Entry): boolean {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, JSON.stringify(entry));
      closeSync(fd);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  }

  private read(file: string): Entry | undefined {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Entry;
    } catch {
      return undefined;
    }
  }

  private write(file: string, entry: Entry): void {
    const staging = `${file}.${process.pid}.tmp`;
    writeFileSync(staging, JSON.stringify(entry), { mode: 0o600 });
    renameSync(staging, file);
  }

  /** Drops expired answers now and then, so the directory does not grow without bound. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.lastSweep < 10 * 60 * 1000) return;
    this.lastSweep = now;
    for (const name of readdirSync(this.dir)) {
      const file = join(this.dir, name);
      try {
        if (now - statSync(file).mtimeMs > KEEP_MS) unlinkSync(file);
      } catch {
        // raced with another process
      }
    }
  }
}

/**
 * What makes two requests "the same": method, path and the body as JSON values, so the order of an
 * object's keys (which no JSON client promises to keep) does not matter; the order in arrays does.
 */
export function fingerprintOf(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`canonical-json\n${method} ${path}\n${canonicalJson(body ?? null)}`)
    .digest('hex');
}

/**
 * JSON with every object's keys sorted (by UTF-16 code units, as Array.prototype.sort does), built as
 * text: copying into a new object would turn a "__proto__" key into a prototype. Iterative, since a
 * 16 KiB body can nest 8,000 deep.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Values still to write, and the punctuation between them (a Literal), last first.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item instanceof Literal) {
      out.push(item.text);
    } else if (Array.isArray(item)) {
      out.push('[');
      stack.push(new Literal(']'));
      for (let i = item.length - 1; i >= 0; i -= 1) {
        stack.push(item[i]);
        if (i > 0) stack.push(new Literal(','));
      }
    } else if (item !== null && typeof item === 'object') {
      const record = item as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      out.push('{');
      stack.push(new Literal('}'));
      for (let i = keys.length - 1; i >= 0; i -= 1) {
        stack.push(record[keys[i]!]);
        stack.push(new Literal(`${JSON.stringify(keys[i])}:`));
        if (i > 0) stack.push(new Literal(','));
      }
    } else {
      out.push(JSON.stringify(item) ?? 'null');
    }
  }
  return out.join('');
}

class Literal {
  constructor(readonly text: string) {}
}
