// The router with a store that answers later (as the PostgreSQL one does): it waits for the claim,
// keeps final answers and releases the rest once the handler is done, turns a store that cannot be
// reached into a 500 before anything runs, and still answers when keeping the answer fails. Also who
// holds a claim (idempotencyOwner.ts) and the database URL setting.
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthcapError } from '../../../domain/errors.js';
import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from '../../../api/idempotency.js';
import { newOwner, ownerGone } from '../../../api/idempotencyOwner.js';
import { Router } from '../../../api/router.js';
import { readSettings, SettingsError } from '../../../runtime/settings/read.js';

const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 5));

/** A store in memory whose every answer arrives on a later tick; `failing` makes the next call of that kind reject. */
class SlowStore implements IdempotencyStore {
  readonly answers = new Map<string, { fingerprint: string; response?: StoredResponse }>();
  readonly log: string[] = [];
  failing: 'claim' | 'complete' | undefined;

  async claim(scope: string, key: string, fingerprint: string): Promise<IdempotencyClaim> {
    await later(undefined);
    if (this.failing === 'claim') throw new AuthcapError('idempotency_unavailable', 'the idempotency database did not answer');
    const id = `${scope}:${key}`;
    const entry = this.answers.get(id);
    if (entry) {
      if (entry.fingerprint !== fingerprint) return { kind: 'reused' };
      return entry.response ? { kind: 'replay', response: entry.response } : { kind: 'in_progress' };
    }
    this.answers.set(id, { fingerprint });
    return {
      kind: 'new',
      complete: async (response) => {
        await later(undefined);
        if (this.failing === 'complete') throw new Error('connection terminated');
        this.log.push(`complete ${key} ${response.status}`);
        this.answers.set(id, { fingerprint, response });
      },
      release: async () => {
        await later(undefined);
        this.log.push(`release ${key}`);
        this.answers.delete(id);
      },
    };
  }
}

describe('the router with a store that answers later', () => {
  const store = new SlowStore();
  let server: Server;
  let url: string;
  let runs = 0;
  beforeAll(async () => {
    const router = new Router({ authenticate: (k) => (k === 'good' ? { id: 'caller', role: 'order-service' } : undefined), idempotency: store });
    router.on('POST', '/v1/things', ['order-service'], async ({ body }) => {
      runs += 1;
      const status = (body as { status?: number }).status ?? 201;
      return { status, body: { run: runs, status } };
    });
    server = createServer((req, res) => void router.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/things`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = async (key: string, body: unknown) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: 'Bearer good', 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as any,
      replayed: res.headers.get('idempotent-replayed'),
      ...(res.headers.has('retry-after') ? { retryAfter: res.headers.get('retry-after') } : {}),
    };
  };

  it('keeps the first answer and replays it, refusing the key with another body', async () => {
    const first = await post('a', { n: 1 });
    expect(first).toEqual({ status: 201, body: { run: 1, status: 201 }, replayed: null });
    expect(store.log).toContain('complete a 201');
    expect(await post('a', { n: 1 })).toEqual({ status: 201, body: { run: 1, status: 201 }, replayed: 'true' });
    expect((await post('a', { n: 2 })).body.error.code).toBe('idempotency_key_reused');
    expect(runs).toBe(1);
  });

  it('releases a 202 or a 5xx once they are answered, so a retry runs again', async () => {
    expect((await post('b', { status: 202 })).status).toBe(202);
    expect(store.log).toContain('release b');
    expect((await post('b', { status: 202 })).body.run).toBe(runs);
    expect(store.answers.has('caller:b')).toBe(false);
  });

  it('a store that cannot be reached: 503 idempotency_unavailable with Retry-After, and nothing runs', async () => {
    const before = runs;
    store.failing = 'claim';
    try {
      const answer = await post('c', { n: 1 });
      expect(answer.status).toBe(503);
      expect(answer.body.error.code).toBe('idempotency_unavailable');
      expect(answer.retryAfter).toBe('2');
    } finally {
      store.failing = undefined;
    }
    expect(runs).toBe(before);
  });

  it('an answer that cannot be kept is still given; the key stays claimed (409 in use) for a retry', async () => {
    store.failing = 'complete';
    try {
      const answer = await post('d', { n: 1 });
      expect(answer).toMatchObject({ status: 201, body: { status: 201 } });
    } finally {
      store.failing = undefined;
    }
    expect((await post('d', { n: 1 })).body.error.code).toBe('idempotency_key_in_use');
  });
});

describe('who holds a claim', () => {
  it('this process holds its own claims; one of this machine whose process ended is gone; another host is unknown (not gone)', () => {
    const mine = newOwner();
    expect(ownerGone(mine)).toBe(false);
    expect(mine.claim).not.toBe(newOwner().claim);
    const ended = spawnSync(process.execPath, ['-e', '0']).pid!;
    expect(ownerGone({ ...mine, pid: ended })).toBe(true);
    expect(ownerGone({ ...mine, pid: process.pid, instance: 'an earlier process with this pid' })).toBe(true);
    expect(ownerGone({ ...mine, pid: ended, host: 'another-host' })).toBe(false);
    expect(ownerGone({ ...mine, pid: ended, pidns: 'pid:[1]' })).toBe(false);
    expect(ownerGone(null)).toBe(false);
  });
});

describe('AUTHCAP_IDEMPOTENCY_DATABASE_URL', () => {
  const refusal = (value: string) => {
    try {
      readSettings('api', { AUTHCAP_IDEMPOTENCY_DATABASE_URL: value });
    } catch (err) {
      expect(err).toBeInstanceOf(SettingsError);
      return (err as Error).message;
    }
    throw new Error('accepted');
  };

  it('takes a postgres:// URL with a host and a database; unset or empty is the file store', () => {
    const url = 'postgresql://authcap:pw@db.internal:5432/authcap?sslmode=require';
    expect(readSettings('api', { AUTHCAP_IDEMPOTENCY_DATABASE_URL: url }).AUTHCAP_IDEMPOTENCY_DATABASE_URL).toBe(url);
    expect(readSettings('api', {}).AUTHCAP_IDEMPOTENCY_DATABASE_URL).toBeUndefined();
    expect(readSettings('api', { AUTHCAP_IDEMPOTENCY_DATABASE_URL: '' }).AUTHCAP_IDEMPOTENCY_DATABASE_URL).toBeUndefined();
  });

  it('refuses anything else by name, saying what is wrong, never with the value (it holds a password)', () => {
    const cases: [string, RegExp][] = [
      ['mysql://u:hunter2@db/authcap', /must be a postgres:\/\/ or postgresql:\/\/ URL, not mysql:\/\//],
      ['postgres://u:hunter2@db.internal:5432', /must name a database/],
      ['hunter2', /this is not a URL/],
    ];
    for (const [value, why] of cases) {
      const message = refusal(value);
      expect(message).toMatch(/^AUTHCAP_IDEMPOTENCY_DATABASE_URL /);
      expect(message).toMatch(why);
      expect(message).not.toContain('hunter2');
    }
  });
});
