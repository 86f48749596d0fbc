// Webhooks through worker crashes: the worker is SIGKILLed while captures are in flight and
// restarted. Every authorization's receiver still gets every event of its transitions, in order, and
// no transition arrives under two different event ids (a repeated delivery of the same id is allowed:
// that is what the id is for).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../runtime/webhookSignature.js';
import { startReceiver, type Receiver } from '../support/webhookReceiver.js';
import { audit } from './audit.js';
import { FULL, eventually, startWorld, type World } from './harness.js';
import { captureInBackground, createStored, killWorkerRepeatedly, settleCaptures } from './drive.js';

const CAPTURES = FULL ? 40 : 6;
const KILLS = FULL ? 4 : 2;

describe('webhooks across worker kills', () => {
  let world: World;
  let receiver: Receiver;
  beforeAll(async () => {
    world = await startWorld({ workers: 1 });
    receiver = await startReceiver();
  }, 240_000);
  afterAll(async () => {
    await receiver?.close();
    await world?.stop();
  });

  it(`${CAPTURES} captures through ${KILLS} worker kills: no event missing, none duplicated under another id`, async () => {
    const endpoint = await world.client.webhookEndpoints.create({ url: receiver.url, events: ['*'] });
    const before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
    const ids: string[] = [];
    for (let i = 0; i < CAPTURES; i += 1) ids.push(await createStored(world, i));
    const captures = ids.map((id) => captureInBackground(world, id));
    await killWorkerRepeatedly(world, KILLS, 1_000);
    const finals = await settleCaptures(world, ids, captures, 120_000);
    expect(finals.map((a) => a?.state)).toEqual(ids.map(() => 'captured'));

    for (const final of finals) {
      const orderId = final!.orderId;
      const received = await eventually(
        async () => receiver.accepted((e) => e.orderId === orderId),
        (got) => got.at(-1)?.type === 'authorization.captured',
        60_000,
      );
      const firsts = [...new Map(received.map((e) => [e.id, e])).values()];
      const types = firsts.map((e) => e.type);
      expect(types[0]).toBe('authorization.drafted');
      expect(types[1]).toBe('authorization.stored');
      expect(types.at(-1)).toBe('authorization.captured');
      expect(types.filter((t) => t === 'authorization.captured')).toHaveLength(1);
      // Between stored and captured only what a capture can go through (a failed attempt retried, the pending view, a reorg).
      for (const t of types.slice(2, -1)) expect(['authorization.capture_failed', 'authorization.preconfirmed', 'authorization.reorged']).toContain(t);
      // Ids are numbered by the authorization in order: no gap (nothing lost), no id twice under another number.
      expect(firsts.map((e) => Number(e.id.split('_').at(-1)))).toEqual(firsts.map((_, i) => i + 1));
      // The feed, read from the authorization's memo rather than from deliveries, agrees.
      const feed = await eventually(
        () => world.client.events.list({ orderId, limit: 100 }),
        (page) => page.data.length === firsts.length,
        10_000,
      );
      expect(feed.data.map((e) => e.id)).toEqual(firsts.map((e) => e.id));
      for (const d of receiver.deliveries.filter((x) => firsts.some((e) => e.id === x.eventId))) {
        expect(verifyWebhook(d.body, d.headers['authcap-signature'], endpoint.secret).id).toBe(d.eventId);
      }
    }
    const result = await audit(world, ids, { caseName: 'webhooks, worker killed', merchantTxBefore: before });
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  }, 600_000);
});
