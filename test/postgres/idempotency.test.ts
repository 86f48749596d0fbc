// Idempotency-Key answers shared by API processes that share no disk (each its own host dir): a
// retry sent to the other API replays the first answer, a key reused with another body is refused
// there, and concurrent retries spread over both APIs make one authorization. Then the PostgreSQL
// store itself, on the cluster's `authcap` database: takeovers, expiry, the sweep, a database that is down.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintOf, type IdempotencyClaim } from '../../api/idempotency.js';
import { IDEMPOTENCY_TABLE, PENDING_STALE_MS, PostgresIdempotencyStore } from '../../api/idempotencyPostgres.js';
import { sign } from '../faults/drive.js';
import { eventually, sleep, type World } from '../faults/harness.js';
import { call, newOrder, startProductionWorld } from './world.js';
import { scratchDirs } from '../support/scratch.js';
import { startPostgres } from '../../devstack/postgres.js';
import { freePort } from '../../devstack/process.js';
import { AuthcapError, httpStatusFor } from '../../domain/errors.js';

const scratch = scratchDirs('idempotency-pg');

const REPLAYED = 'idempotent-replayed';

describe('Idempotency-Key across API processes on separate hosts', () => {
  let world: World;
  let db: pg.Client;
  beforeAll(async () => {
    world = await startProductionWorld();
    db = new pg.Client({ connectionString: world.cluster!.idempotencyDatabaseUrl });
    await db.connect();
  }, 300_000);
  afterAll(async () => {
    await db?.end();
    await world?.stop();
  });

  /** POST with a key, again while the first is still answered (409 in use) or not final (202). */
  const settled = async (path: string, body: unknown, key: string, api: number) => {
    for (let i = 0; i < 120; i += 1) {
      const answer = await call(world, 'POST', path, body, { api, idempotencyKey: key });
      if (answer.status !== 202 && !(answer.status === 409 && answer.body.error?.code === 'idempotency_key_in_use')) return answer;
      await sleep(500);
    }
    throw new Error(`${path} never settled`);
  };

  it('the APIs share no state dir, and keep no answers on disk', () => {
    const [a, b] = world.apiStateDirs;
    expect(a).toBe(join(world.stateDir, 'hosts', 'api-1'));
    expect(b).toBe(join(world.stateDir, 'hosts', 'api-2'));
    for (const dir of [a!, b!]) expect(existsSync(join(dir, 'idempotency'))).toBe(false);
  });

  it('a create, a capture and a refund retried on the other API replay the first answer', async () => {
    const payer = world.payers[0]!;
    const orderId = newOrder('idem');
    const createBody = { orderId, payer: payer.address, amount: '0.02' };
    const created = await call(world, 'POST', '/v1/authorizations', createBody, { api: 0, idempotencyKey: `create-${orderId}` });
    expect(created.status).toBe(201);
    expect(created.headers.get(REPLAYED)).toBeNull();
    const again = await call(world, 'POST', '/v1/authorizations', createBody, { api: 1, idempotencyKey: `create-${orderId}` });
    expect(again).toMatchObject({ status: 201, body: created.body });
    expect(again.headers.get(REPLAYED)).toBe('true');

    const id = created.body.id as string;
    const signed = await call(world, 'POST', `/v1/authorizations/${id}/signature`, { signature: sign(created.body.typedData, payer.privateKey as Hex) });
    expect(signed.status).toBe(200);
    const capture = `/v1/authorizations/${id}/capture`;
    const captured = await settled(capture, {}, `capture-${orderId}`, 0);
    expect(captured.status).toBe(200);
    expect(captured.body).toMatchObject({ id, state: 'captured' });
    const captureAgain = await call(world, 'POST', capture, {}, { api: 1, idempotencyKey: `capture-${orderId}` });
    expect(captureAgain).toMatchObject({ status: 200, body: captured.body });
    expect(captureAgain.headers.get(REPLAYED)).toBe('true');

    const refunds = `/v1/authorizations/${id}/refunds`;
    const refunded = await settled(refunds, { amount: '0.01', reason: 'returned' }, `refund-${orderId}`, 0);
    expect(refunded.status).toBe(201);
    const refundAgain = await call(world, 'POST', refunds, { amount: '0.01', reason: 'returned' }, { api: 1, idempotencyKey: `refund-${orderId}` });
    expect(refundAgain).toMatchObject({ status: 201, body: refunded.body });
    expect(refundAgain.body.id).toBe(refunded.body.id);
    expect(refundAgain.headers.get(REPLAYED)).toBe('true');
    const list = await call(world, 'GET', refunds, undefined, { api: 1 });
    expect(list.body.data.filter((r: { reason: string | null }) => r.reason === 'returned')).toHaveLength(1);
  });

  it('the same key with another body on the other API is 409 idempotency_key_reused, and creates nothing', async () => {
    const payer = world.payers[1]!;
    const first = newOrder('reuse-a');
    const other = newOrder('reuse-b');
    const key = `reuse-${first}`;
    const created = await call(world, 'POST', '/v1/authorizations', { orderId: first, payer: payer.address, amount: '0.01' }, { api: 0, idempotencyKey: key });
    expect(created.status).toBe(201);
    const reused = await call(world, 'POST', '/v1/authorizations', { orderId: other, payer: payer.address, amount: '0.01' }, { api: 1, idempotencyKey: key });
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    // Read from Temporal itself (not visibility, which lags): no workflow for the other order.
    await expect(world.client.authorizations.idForOrder(other)).rejects.toMatchObject({ code: 'not_found' });
    expect(await world.client.authorizations.idForOrder(first)).toBe(created.body.id);
  });

  it('20 concurrent retries of one create over both APIs: one authorization, every answer the same', async () => {
    const payer = world.payers[2]!;
    const orderId = newOrder('race');
    const body = { orderId, payer: payer.address, amount: '0.01' };
    const key = `race-${orderId}`;
    const firstRound = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(world, 'POST', '/v1/authorizations', body, { api: i % 2, idempotencyKey: key })),
    );
    for (const answer of firstRound) {
      if (answer.status === 409) expect(answer.body.error.code).toBe('idempotency_key_in_use');
      else expect(answer.status).toBe(201);
    }
    const finals = await Promise.all(firstRound.map(async (answer, i) => (answer.status === 201 ? answer : settled('/v1/authorizations', body, key, i % 2))));
    expect(finals.map((a) => a.status)).toEqual(finals.map(() => 201));
    const ids = new Set(finals.map((a) => a.body.id));
    expect(ids.size).toBe(1);
    expect(finals.filter((a) => a.headers.get(REPLAYED) !== 'true')).toHaveLength(1);
    const id = [...ids][0];
    expect(await world.client.authorizations.idForOrder(orderId)).toBe(id);
    const listed = await eventually(
      () => call(world, 'GET', `/v1/authorizations?orderId=${encodeURIComponent(orderId)}`),
      (r) => r.body.data?.length >= 1,
      30_000,
    );
    expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual([id]);
  });

  describe('the PostgreSQL store', () => {
    const path = '/v1/authorizations';
    const fp = (body: unknown) => fingerprintOf('POST', path, body);
    const scope = `store-${process.pid}-${Date.now()}`;
    let store: PostgresIdempotencyStore;
    let other: PostgresIdempotencyStore;
    beforeAll(async () => {
      // Two processes' worth, opened together: the table is made once, without a race.
      [store, other] = await Promise.all([
        PostgresIdempotencyStore.open(world.cluster!.idempotencyDatabaseUrl),
        PostgresIdempotencyStore.open(world.cluster!.idempotencyDatabaseUrl),
      ]);
    });
    afterAll(async () => {
      await store?.close();
      await other?.close();
    });
    const age = (key: string, seconds: number) =>
      db.query(`UPDATE ${IDEMPOTENCY_TABLE} SET created_at = clock_timestamp() - make_interval(secs => $3) WHERE scope = $1 AND key = $2`, [
        scope,
        key,
        seconds,
      ]);
    const newClaim = async (claim: Promise<IdempotencyClaim>) => {
      const c = await claim;
      if (c.kind !== 'new') throw new Error(`expected a new claim, got ${c.kind}`);
      return c;
    };

    it('replays, refuses a reused key, answers in progress, and forgets a released claim', async () => {
      const body = { orderId: 'o-1', amount: '1' };
      const claim = await newClaim(store.claim(scope, 'k1', fp(body)));
      expect((await other.claim(scope, 'k1', fp(body))).kind).toBe('in_progress');
      await claim.complete({ status: 201, body: { id: 'auth_1', nested: { z: 1, a: 2 } } });
      const replay = await other.claim(scope, 'k1', fp({ amount: '1', orderId: 'o-1' }));
      expect(replay).toEqual({ kind: 'replay', response: { status: 201, body: { id: 'auth_1', nested: { z: 1, a: 2 } } } });
      // The body as first answered, its keys in their order.
      expect(JSON.stringify(replay.kind === 'replay' && replay.response.body)).toBe('{"id":"auth_1","nested":{"z":1,"a":2}}');
      expect((await other.claim(scope, 'k1', fp({ ...body, amount: '2' }))).kind).toBe('reused');
      const released = await newClaim(store.claim(scope, 'k2', fp(body)));
      await released.release();
      await newClaim(other.claim(scope, 'k2', fp({ something: 'else' })));
    });

    it("takes over at once a pending claim whose process on this machine is gone; another host's once its holder stops touching it", async () => {
      await newClaim(store.claim(scope, 'dead', fp({})));
      const dead = spawnSync(process.execPath, ['-e', '0']).pid;
      await db.query(`UPDATE ${IDEMPOTENCY_TABLE} SET owner = jsonb_set(owner, '{pid}', to_jsonb($3::int)) WHERE scope = $1 AND key = $2`, [
        scope,
        'dead',
        dead,
      ]);
      await newClaim(other.claim(scope, 'dead', fp({})));

      const late = await newClaim(store.claim(scope, 'far', fp({})));
      await db.query(`UPDATE ${IDEMPOTENCY_TABLE} SET owner = jsonb_set(owner, '{host}', '"another-host"') WHERE scope = $1 AND key = $2`, [scope, 'far']);
      expect((await other.claim(scope, 'far', fp({}))).kind).toBe('in_progress');
      await age('far', PENDING_STALE_MS / 1000 + 1);
      const taker = await newClaim(other.claim(scope, 'far', fp({})));
      // The first claimant's answer comes too late: the row is the taker's now.
      await late.complete({ status: 201, body: { id: 'late' } });
      expect((await store.claim(scope, 'far', fp({}))).kind).toBe('in_progress');
      await taker.complete({ status: 201, body: { id: 'taker' } });
      expect(await store.claim(scope, 'far', fp({}))).toEqual({ kind: 'replay', response: { status: 201, body: { id: 'taker' } } });
    });

    it('a holder at work touches its claim: older than the stale time but touched since, it is not taken over', async () => {
      const working = await newClaim(store.claim(scope, 'working', fp({})));
      await age('working', PENDING_STALE_MS / 1000 - 1);
      // Its next touch (every 5 s) makes it young again.
      await new Promise((r) => setTimeout(r, 6_000));
      expect((await other.claim(scope, 'working', fp({}))).kind).toBe('in_progress');
      await working.complete({ status: 201, body: { id: 'working' } });
      expect((await other.claim(scope, 'working', fp({}))).kind).toBe('replay');
    });

    it('an answer older than 24 h is gone: the key is new again, and the sweep deletes such rows in bounded batches', async () => {
      const kept = await newClaim(store.claim(scope, 'old', fp({ a: 1 })));
      await kept.complete({ status: 201, body: { id: 'old' } });
      await age('old', 24 * 3600 + 60);
      await newClaim(other.claim(scope, 'old', fp({ a: 2 })));
      for (const key of ['s1', 's2', 's3']) {
        const c = await newClaim(store.claim(scope, key, fp({})));
        await c.complete({ status: 201, body: {} });
        await age(key, 25 * 3600);
      }
      const count = async () => (await db.query(`SELECT count(*)::int AS n FROM ${IDEMPOTENCY_TABLE} WHERE scope = $1 AND key LIKE 's_'`, [scope])).rows[0].n;
      expect(await store.sweep(2)).toBe(2);
      expect(await count()).toBe(1);
      await store.sweep(1_000);
      expect(await count()).toBe(0);
      expect((await store.claim(scope, 'k1', fp({ orderId: 'o-1', amount: '1' }))).kind).toBe('replay');
    });

    it('a database that stops answering once started: a claim is 503 idempotency_unavailable, not a bug', async () => {
      // A PostgreSQL of its own, so stopping it leaves the cluster's Temporal alone.
      const dir = scratch();
      const postgres = await startPostgres({ dataDir: join(dir, 'data'), passwordFile: join(dir, 'password'), port: await freePort(), log: () => undefined });
      let lone: PostgresIdempotencyStore | undefined;
      try {
        lone = await PostgresIdempotencyStore.open(
          `postgres://${postgres.user}:${encodeURIComponent(postgres.password)}@${postgres.host}:${postgres.port}/postgres`,
        );
        expect((await lone.claim(scope, 'before', fp({}))).kind).toBe('new');
        await postgres.stop();
        const err = await lone.claim(scope, 'after', fp({})).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(AuthcapError);
        expect(err).toMatchObject({ code: 'idempotency_unavailable' });
        expect(httpStatusFor((err as AuthcapError).code)).toBe(503);
      } finally {
        await lone?.close().catch(() => undefined);
        await postgres.stop().catch(() => undefined);
      }
    });

    it('a database that cannot be reached stops the start with why, and never shows the password', async () => {
      const url = 'postgres://authcap:s3cret-pw@127.0.0.1:1/authcap';
      const err = (await PostgresIdempotencyStore.open(url).catch((e: Error) => e)) as Error;
      expect(err.message).toMatch(/^the idempotency database \(AUTHCAP_IDEMPOTENCY_DATABASE_URL\) cannot be used: /);
      expect(err.message).not.toContain('s3cret-pw');
    });
  });
});
