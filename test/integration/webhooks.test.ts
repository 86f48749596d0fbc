// Webhooks against a real receiver on 127.0.0.1: every transition an order service cares about is
// POSTed, signed, in order, once per event id; refused deliveries are retried with the same id; a
// payer's onchain cancellation reaches the receiver by itself; the feed holds the same events.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseUnits, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { verifyWebhook } from '../../runtime/webhookSignature.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, dev, walletSign } from '../support/api.js';
import { asTokenOwner, draft, mint, runCli, sleep, stored, type DemoKey } from '../support/lifecycle.js';
import { startReceiver, type Receiver } from '../support/webhookReceiver.js';

/** A payer of this file's own, so no other test's balance checks see these captures. */
async function freshPayer(): Promise<DemoKey> {
  const privateKey = generatePrivateKey();
  const { address } = privateKeyToAccount(privateKey);
  await mint(address, parseUnits('100', 6));
  return { address, privateKey };
}

async function register(receiver: Receiver, events: string[]) {
  const res = await api('POST', '/v1/webhook_endpoints', { url: receiver.url, events, description: 'webhooks.test' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; secret: string; url: string; events: string[] };
}

const forOrder = (orderId: string) => (event: any) => event.orderId === orderId;

describe('webhooks', () => {
  let receiver: Receiver;
  let endpoint: { id: string; secret: string };
  beforeAll(async () => {
    receiver = await startReceiver();
    endpoint = await register(receiver, ['*']);
  });
  afterAll(async () => {
    await api('DELETE', `/v1/webhook_endpoints/${endpoint.id}`);
    await receiver.close();
  });

  it('drafted → stored → captured: exactly the events of those transitions, in order, each signed', async () => {
    expect(endpoint.secret).toMatch(/^whsec_/);
    const p = await freshPayer();
    const s = await stored(p, '3.5');
    const capture = await api('POST', `/v1/authorizations/${s.id}/capture`);
    expect(capture.status, JSON.stringify(capture.body)).toBe(200);
    const captured = capture.body;

    const events = await vi.waitFor(
      () => {
        const got = receiver.accepted(forOrder(s.orderId));
        expect(got.at(-1)?.type).toBe('authorization.captured');
        return got;
      },
      { timeout: 20_000, interval: 200 },
    );
    // preconfirmed is the capture's log seen in the pending view before its block: it is on the record.
    const expected = [
      'authorization.drafted',
      'authorization.stored',
      ...(captured.capture.preconfirmedAt ? ['authorization.preconfirmed'] : []),
      'authorization.captured',
    ];
    expect(events.map((e) => e.type)).toEqual(expected);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(events.map((e) => e.data.object.state)).toEqual(expected.map((t) => t.replace('authorization.', '').replace('preconfirmed', 'capturing')));
    for (const e of events) expect(e.data.object.id).toBe(s.id);
    expect(events.at(-1).data.object.capture.transactionHash).toBe(captured.capture.transactionHash);

    const deliveries = receiver.deliveries.filter((d) => events.some((e) => e.id === d.eventId));
    expect(deliveries).toHaveLength(events.length);
    for (const d of deliveries) {
      const event = verifyWebhook(d.body, d.headers['authcap-signature'], endpoint.secret);
      expect(event.id).toBe(d.eventId);
      expect(d.headers['content-type']).toBe('application/json');
      expect(() => verifyWebhook(d.body, d.headers['authcap-signature'], 'whsec_wrong')).toThrow(/no signature matches/);
    }

    // The feed has the same events in the same order (after its short settling delay).
    await sleep(2_500);
    const feed = await api('GET', `/v1/events?orderId=${encodeURIComponent(s.orderId)}`);
    expect(feed.status, JSON.stringify(feed.body)).toBe(200);
    expect(feed.body.data.map((e: any) => e.id)).toEqual(events.map((e) => e.id));
    expect(feed.body.data).toEqual(events);
    const second = await api('GET', `/v1/events?orderId=${encodeURIComponent(s.orderId)}&limit=1&after=${events[0].id}`);
    expect(second.body).toMatchObject({ data: [{ id: events[1].id }], hasMore: true });
    const onlyCaptured = await api('GET', `/v1/events?orderId=${encodeURIComponent(s.orderId)}&type=authorization.captured`);
    expect(onlyCaptured.body.data.map((e: any) => e.id)).toEqual([events.at(-1).id]);
    // And the operator's CLI reads the same feed.
    const cli = await runCli(['events', '--order', s.orderId, '--json']);
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout).data.map((e: any) => e.type)).toEqual(expected);
    const table = await runCli(['events', '--order', s.orderId]);
    expect(table.stdout).toContain('authorization.captured');
    expect(table.stdout).toContain(captured.capture.transactionHash);
  });

  it('a receiver answering 500 to the first three tries of each event still gets each, the retries carrying the same event id', async () => {
    const refusing = await startReceiver({ failFirst: 3 });
    const flaky = await register(refusing, ['authorization.drafted', 'authorization.voided']);
    try {
      const d = await draft(await freshPayer(), '1');
      const voided = await api('POST', `/v1/authorizations/${d.id}/void`, { reason: 'customer changed their mind' });
      expect(voided.status).toBe(200);
      // Backoff 1 s, 2 s, 4 s per event, one event after the other on this endpoint.
      const events = await vi.waitFor(
        () => {
          const got = refusing.accepted(forOrder(d.orderId));
          expect(got.map((e) => e.type)).toEqual(['authorization.drafted', 'authorization.voided']);
          return got;
        },
        { timeout: 60_000, interval: 500 },
      );
      for (const event of events) {
        const tries = refusing.deliveries.filter((x) => x.eventId === event.id);
        expect(tries.map((x) => x.status)).toEqual([500, 500, 500, 200]);
        for (const attempt of tries) {
          expect(JSON.parse(attempt.body).id).toBe(event.id);
          expect(verifyWebhook(attempt.body, attempt.headers['authcap-signature'], flaky.secret).id).toBe(event.id);
        }
        // Exponential backoff: each wait at least as long as the one before.
        const gaps = tries.slice(1).map((x, i) => x.at - tries[i]!.at);
        expect(gaps[2]!).toBeGreaterThanOrEqual(gaps[0]! * 2 - 500);
      }
      // The first endpoint, answering at once, was not held up by this one: it had both events
      // before the refusing endpoint accepted even the first.
      expect(receiver.accepted(forOrder(d.orderId)).map((e) => e.type)).toEqual(['authorization.drafted', 'authorization.voided']);
      const firstAccepted = refusing.deliveries.find((x) => x.eventId === events[0]!.id && x.status === 200)!.at;
      const fastVoided = receiver.deliveries.find((x) => x.eventId === events[1]!.id && x.status === 200)!.at;
      expect(fastVoided).toBeLessThan(firstAccepted);
    } finally {
      await api('DELETE', `/v1/webhook_endpoints/${flaky.id}`);
      await refusing.close();
    }
  }, 90_000);

  it('a payer who cancels onchain, outside authcap, produces authorization.canceled within one reconciliation period', async () => {
    const p = await freshPayer();
    const s = await stored(p, '2');
    const cancelSignature = walletSign(s.cancellationTypedData, p.privateKey) as Hex;
    const receipt = await asTokenOwner((w) =>
      w.writeContract({
        address: dev().tokenAddress,
        abi: tokenAbi,
        functionName: 'cancelAuthorization',
        args: [p.address, s.authorization.nonce, cancelSignature],
      }),
    );
    const mined = Date.now();
    const period = Number(process.env.AUTHCAP_RECONCILE_SECONDS ?? 2) * 1000;
    const canceled = await vi.waitFor(
      () => {
        const got = receiver.accepted(forOrder(s.orderId)).find((e) => e.type === 'authorization.canceled');
        expect(got).toBeDefined();
        return got;
      },
      { timeout: 20_000, interval: 50 },
    );
    const took = receiver.deliveries.find((d) => d.eventId === canceled.id)!.at - mined;
    console.log(`authorization.canceled reached the receiver ${took} ms after the cancellation was mined (period ${period} ms)`);
    // One period to notice (the watcher usually nudges at once), plus the hand-over and the POST itself.
    expect(took).toBeLessThanOrEqual(period + 1_000);
    expect(canceled.data.object.cancellation).toMatchObject({ by: 'onchain', transactionHash: receipt.transactionHash });
  });

  it('an endpoint gets only the types it subscribed to, and nothing once deleted', async () => {
    const picky = await startReceiver();
    const only = await register(picky, ['authorization.voided']);
    try {
      const first = await draft(await freshPayer(), '1');
      await api('POST', `/v1/authorizations/${first.id}/void`, { reason: 'test' });
      await vi.waitFor(() => expect(picky.accepted(forOrder(first.orderId)).map((e) => e.type)).toEqual(['authorization.voided']), { timeout: 15_000 });
      const deleted = await api('DELETE', `/v1/webhook_endpoints/${only.id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toMatchObject({ id: only.id, deleted: true });
      expect((await api('GET', '/v1/webhook_endpoints')).body.data.map((e: any) => e.id)).not.toContain(only.id);
      const second = await draft(await freshPayer(), '1');
      await api('POST', `/v1/authorizations/${second.id}/void`, { reason: 'test' });
      await vi.waitFor(() => expect(receiver.accepted(forOrder(second.orderId)).map((e) => e.type)).toContain('authorization.voided'), { timeout: 15_000 });
      expect(picky.accepted(forOrder(second.orderId))).toEqual([]);
    } finally {
      await picky.close();
    }
  });

  it('endpoints: the secret is shown once; bad input is refused with a code and changes nothing', async () => {
    const listed = await api('GET', '/v1/webhook_endpoints');
    expect(listed.status).toBe(200);
    const mine = listed.body.data.find((e: any) => e.id === endpoint.id);
    expect(mine).toMatchObject({ id: endpoint.id, url: receiver.url, events: ['*'] });
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');
    expect(JSON.stringify((await api('GET', `/v1/webhook_endpoints/${endpoint.id}`)).body)).not.toContain('whsec_');
    const before = listed.body.data.map((e: any) => e.id).sort();
    for (const body of [
      { url: 'ftp://127.0.0.1/x', events: ['*'] },
      { url: 'not a url', events: ['*'] },
      { url: receiver.url, events: ['authorization.paid'] },
      { url: receiver.url, events: [] },
      { url: receiver.url },
      { url: receiver.url, events: ['*'], secret: 'mine' },
      { url: 'http://user:pw@127.0.0.1/x', events: ['*'] },
    ]) {
      const res = await api('POST', '/v1/webhook_endpoints', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
    expect((await api('GET', '/v1/webhook_endpoints/we_AAAAAAAAAAAAAAAA')).body.error.code).toBe('not_found');
    expect((await api('DELETE', '/v1/webhook_endpoints/we_AAAAAAAAAAAAAAAA')).body.error.code).toBe('not_found');
    const operator = await api('POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['*'] }, { key: dev().operatorApiKey });
    expect(operator.body.error.code).toBe('forbidden');
    expect((await api('GET', '/v1/events?type=authorization.paid')).body.error.code).toBe('validation_error');
    expect((await api('GET', '/v1/events?after=evt_nope')).body.error.code).toBe('validation_error');
    expect((await api('GET', '/v1/events?after=evt_01a20857-b94c-73ca-a773-19703a398a5e_0001')).body.error.code).toBe('not_found');
    expect((await api('GET', '/v1/webhook_endpoints')).body.data.map((e: any) => e.id).sort()).toEqual(before);
  });
});
