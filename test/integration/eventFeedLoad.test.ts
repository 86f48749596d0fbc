// The events feed under a burst, against the real API and Temporal. An outside probe sent 100
// parallel GET /v1/events with an operator key and got 58 × 503 temporal_unavailable while
// Temporal was up: every request walked 30 days of visibility windows on its own and the calls
// timed out in the server's queue. Identical requests now share one scan, scans are bounded and
// queued, and a caller over the bound hears 429 with Retry-After, never a false outage.
// Correctness and capacity only: no wall-clock assertions.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { api, dev, newOrderId, payer, type ApiResult } from '../support/api.js';

const p = payer(7);
const operator = { key: dev().operatorApiKey };

interface FeedEvent {
  id: string;
  type: string;
  orderId: string;
  data: { object: { id: string } };
}
type FeedAnswer = ApiResult<{ data: FeedEvent[]; hasMore: boolean; error?: { code: string } }>;

const feed = (query: string): Promise<FeedAnswer> => api('GET', `/v1/events${query}`, undefined, operator);

/** 429 is allowed under load when it says when to come back; anything else but 200 is a failure. */
function expectAnsweredOrThrottled(answers: FeedAnswer[]): FeedAnswer[] {
  const statuses = answers.map((a) => (a.status === 200 ? 200 : `${a.status} ${a.body.error?.code ?? ''}`.trim()));
  for (const a of answers) {
    if (a.status === 429) {
      expect(a.body.error?.code).toBe('rate_limited');
      expect(Number(a.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } else {
      expect(a.status, JSON.stringify(statuses)).toBe(200);
    }
  }
  return answers.filter((a) => a.status === 200);
}

/** Each event once (the order is the feed's own recording order, checked against a fresh reading). */
function expectEachOnce(events: FeedEvent[]): void {
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
}

const orders: { orderId: string; id: string }[] = [];

beforeAll(async () => {
  // Enough events that the default page (20) is full and the oldest ones are settled: a later
  // answer can only add events after them, so every right answer to one request is the same.
  const created = await Promise.all(
    Array.from({ length: 24 }, async () => {
      const orderId = newOrderId('feed-load');
      const res = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '1' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return { orderId, id: res.body.id as string };
    }),
  );
  orders.push(...created);
  await vi.waitFor(
    async () => {
      for (const { orderId } of orders) {
        const answer = await feed(`?orderId=${encodeURIComponent(orderId)}`);
        expect(answer.status).toBe(200);
        expect(answer.body.data).toHaveLength(1);
      }
    },
    { timeout: 30_000, interval: 500 },
  );
}, 120_000);

describe('the events feed under 100 parallel requests', () => {
  it('100 × GET /v1/events (operator): every answer is 200 and the same, correct page', async () => {
    const answers = await Promise.all(Array.from({ length: 100 }, () => feed('')));
    const ok = expectAnsweredOrThrottled(answers);
    // Identical requests share a scan: none of these needs to be throttled.
    expect(ok).toHaveLength(100);
    const first = ok[0]!.body;
    for (const a of ok) expect(a.body).toEqual(first);
    expect(first.data).toHaveLength(20);
    expect(first.hasMore).toBe(true);
    expectEachOnce(first.data);
    // The page is the feed's true start: a fresh reading of a longer page begins with it.
    const reference = (await feed('?limit=100')).body;
    expect(reference.data.slice(0, 20)).toEqual(first.data);
  });

  it('100 different requests at once: each 200 with its own correct page, or 429 with Retry-After, never 503', async () => {
    const limits = Array.from({ length: 100 }, (_, i) => i + 1);
    const answers = await Promise.all(limits.map((limit) => feed(`?limit=${limit}`)));
    const reference = (await feed('?limit=100')).body;
    expectAnsweredOrThrottled(answers);
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    answers.forEach((a, i) => {
      if (a.status !== 200) return;
      const limit = limits[i]!;
      // Events only ever join the end of the feed: an earlier answer is a prefix of a later one.
      expect(a.body.data).toEqual(reference.data.slice(0, a.body.data.length));
      expect(a.body.data.length === limit || !a.body.hasMore).toBe(true);
    });
  });

  it('filtered by order, 4 × 25 parallel: each order gets exactly its own event', async () => {
    const picked = orders.slice(0, 4);
    const requests = picked.flatMap((o) => Array.from({ length: 25 }, () => o));
    const answers = await Promise.all(requests.map((o) => feed(`?orderId=${encodeURIComponent(o.orderId)}`)));
    expectAnsweredOrThrottled(answers);
    answers.forEach((a, i) => {
      if (a.status !== 200) return;
      const o = requests[i]!;
      expect(a.body.data.map((e) => [e.type, e.orderId, e.data.object.id])).toEqual([['authorization.drafted', o.orderId, o.id]]);
    });
    expect(answers.every((a) => a.status === 200)).toBe(true);
  });

  it('a follower after a cursor, 100 parallel: all 200, the same next events', async () => {
    const start = (await feed('?limit=5')).body.data;
    const cursor = start.at(-1)!.id;
    const answers = await Promise.all(Array.from({ length: 100 }, () => feed(`?after=${cursor}&limit=10`)));
    const ok = expectAnsweredOrThrottled(answers);
    expect(ok).toHaveLength(100);
    for (const a of ok) expect(a.body).toEqual(ok[0]!.body);
    const reference = (await feed('?limit=15')).body.data;
    expect(ok[0]!.body.data).toEqual(reference.slice(5, 15));
  });
});
