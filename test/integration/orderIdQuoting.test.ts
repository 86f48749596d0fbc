// Order ids against the real visibility store (the dev server's SQLite). Temporal re-escapes a
// query's string values on their way to the store (client/visibilityQuery.ts says how), so an order
// id holding `"`, `\` or an edge `'` was searched as another text: `?orderId=q"1-X` answered with
// the authorization of order `q\"1-X`, and `q"1-X` itself was never found. Such ids are now refused
// (400 naming orderId) when created and when searched for; every id still accepted is found exactly,
// by list, feed and CLI.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AuthcapClient } from '../../client/authcapClient.js';
import type { AuthorizationResource } from '../../domain/authorization.js';
import { AuthcapError } from '../../domain/errors.js';
import { workflowIdForOrder } from '../../domain/ids.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { api, dev, payer } from '../support/api.js';
import { runCli } from '../support/lifecycle.js';
import { connectTemporal, workflowExists } from '../support/temporal.js';

const p = payer(6);
const u = randomBytes(4).toString('hex');
let client: AuthcapClient;

const enc = encodeURIComponent;
const operator = () => ({ key: dev().operatorApiKey });

beforeAll(async () => {
  client = await AuthcapClient.connect(loadTemporalSettings({ address: dev().temporalAddress, namespace: dev().temporalNamespace }));
});
afterAll(async () => {
  await client?.close();
});

describe('order ids visibility cannot search for exactly', () => {
  const quoted = `q"${u}-X`;
  const escaped = `q\\"${u}-X`;
  const leadingQuote = `'${u}-Y`;
  const bare = `${u}-Y`;
  const refused = [quoted, escaped, leadingQuote, `o'brien-${u}`, `back\\slash-${u}`];
  /** The order a search for `leadingQuote` found, before such searches were refused (the store trims `'`). */
  let trimmed: AuthorizationResource;

  beforeAll(async () => {
    const plain = await api('POST', '/v1/authorizations', { orderId: bare, payer: p.address, amount: '1' });
    expect(plain.status, JSON.stringify(plain.body)).toBe(201);
    trimmed = plain.body;
  });

  it.each(refused)('creating %j is 400 naming orderId, by HTTP and by the library, and starts nothing', async (orderId) => {
    const fresh = `${orderId}-new`;
    const res = await api('POST', '/v1/authorizations', { orderId: fresh, payer: p.address, amount: '1' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', details: { field: 'orderId' } });
    expect(res.body.error.message).toMatch(/^orderId must not contain quotes/);
    const library = await client.authorizations.create({ orderId: fresh, payer: p.address, amount: '1' }).catch((err: unknown) => err);
    expect(library).toBeInstanceOf(AuthcapError);
    expect(library).toMatchObject({ code: 'validation_error', details: { field: 'orderId' } });
    const temporal = await connectTemporal();
    try {
      expect(await workflowExists(temporal, workflowIdForOrder(fresh))).toBe(false);
    } finally {
      await temporal.connection.close();
    }
  });

  it.each(refused)('searching for %j is 400 naming orderId (list, feed, library), never another order', async (orderId) => {
    for (const path of [`/v1/authorizations?orderId=${enc(orderId)}`, `/v1/events?orderId=${enc(orderId)}`]) {
      const res = await api('GET', path, undefined, operator());
      expect(res.status, `${path} → ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_error', details: { field: 'orderId' } });
    }
    await expect(client.authorizations.list({ orderId })).rejects.toMatchObject({ code: 'validation_error', details: { field: 'orderId' } });
    await expect(client.events.list({ orderId })).rejects.toMatchObject({ code: 'validation_error', details: { field: 'orderId' } });
  });

  // Each CLI run starts Node and tsx: seconds apiece on a busy machine.
  it('the CLI refuses the same searches instead of listing the wrong order', { timeout: 180_000 }, async () => {
    const runs = await Promise.all([
      runCli(['list', '--order', quoted, '--json']),
      runCli(['list', '--order', leadingQuote]),
      runCli(['events', '--order', quoted, '--json']),
      runCli(['events', '--order', escaped]),
    ]);
    for (const run of runs) {
      expect(run.code, run.stdout + run.stderr).toBe(1);
      expect(run.stdout).toMatch(/error validation_error: orderId must not contain quotes/);
      // The order the store would have matched instead is nowhere in the answer.
      expect(run.stdout).not.toContain(trimmed.id);
    }
  });
});

describe('every order id still accepted is found exactly, and only it', () => {
  // `_` and `%` would be wildcards under LIKE: each id has a sibling they would match.
  const wild = `p_t%-${u}`;
  const wildSibling = `pxtZZ-${u}`;
  const punctuation = `tick\`;(x)*--/*y*/ z-${u}`;
  const long = `${u}-${'a-b.c:d/e+f~'.repeat(20)}`.slice(0, 200);
  const unicode = `ordre-été-订单-🧾-${u}`;
  const created: Record<string, AuthorizationResource> = {};

  beforeAll(async () => {
    for (const orderId of [wild, wildSibling, punctuation, long]) {
      const res = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '1' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      created[orderId] = res.body;
    }
    // The HTTP API takes ASCII only; the library takes any well-formed text.
    created[unicode] = await client.authorizations.create({ orderId: unicode, payer: p.address, amount: '1' });
    expect(long).toHaveLength(200);
  });

  it.each([
    ['underscore and percent', () => wild],
    ['backtick, comment and punctuation', () => punctuation],
    ['200 characters', () => long],
  ])('%s: HTTP list and feed answer with that order only', async (_name, id) => {
    const orderId = id();
    const list = await api('GET', `/v1/authorizations?orderId=${enc(orderId)}`, undefined, operator());
    expect(list.status).toBe(200);
    expect(list.body.data.map((a: { id: string; orderId: string }) => [a.id, a.orderId])).toEqual([[created[orderId]!.id, orderId]]);
    await vi.waitFor(
      async () => {
        const feed = await api('GET', `/v1/events?orderId=${enc(orderId)}`, undefined, operator());
        expect(feed.status).toBe(200);
        expect(feed.body.data.map((e: { type: string; orderId: string; data: { object: { id: string } } }) => [e.type, e.orderId, e.data.object.id])).toEqual([
          ['authorization.drafted', orderId, created[orderId]!.id],
        ]);
      },
      { timeout: 15_000, interval: 500 },
    );
  });

  it('non-ASCII text through the library: list and feed find it exactly', async () => {
    const page = await client.authorizations.list({ orderId: unicode });
    expect(page.data.map((a) => [a.id, a.orderId])).toEqual([[created[unicode]!.id, unicode]]);
    await vi.waitFor(
      async () => {
        const feed = await client.events.list({ orderId: unicode });
        expect(feed.data.map((e) => [e.type, e.orderId, e.data.object.id])).toEqual([['authorization.drafted', unicode, created[unicode]!.id]]);
      },
      { timeout: 15_000, interval: 500 },
    );
  });

  it('the CLI lists and follows each of them by --order', { timeout: 180_000 }, async () => {
    // The feed holds back its last 2 s: wait until every order's event is out.
    await vi.waitFor(
      async () => {
        for (const orderId of [wild, punctuation, long, unicode]) expect((await client.events.list({ orderId })).data).toHaveLength(1);
      },
      { timeout: 15_000, interval: 500 },
    );
    for (const orderId of [wild, punctuation, long, unicode]) {
      const [list, events] = await Promise.all([runCli(['list', '--order', orderId, '--json']), runCli(['events', '--order', orderId, '--json'])]);
      expect(list.code, list.stdout + list.stderr).toBe(0);
      expect(JSON.parse(list.stdout).data.map((a: { id: string }) => a.id)).toEqual([created[orderId]!.id]);
      expect(events.code, events.stdout + events.stderr).toBe(0);
      expect(JSON.parse(events.stdout).data.map((e: { orderId: string; data: { object: { id: string } } }) => [e.orderId, e.data.object.id])).toEqual([
        [orderId, created[orderId]!.id],
      ]);
    }
  });
});
