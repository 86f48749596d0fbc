// A "host" (one worker process and one API process, each with its own state dir) SIGKILLed while
// payments run through both APIs. Callers do what a load balancer's retry does: the same request, with
// the same Idempotency-Key, on the other API. The audit ends it: nothing lost, nothing captured twice,
// nothing stuck, no gap in the merchant's nonces. The watcher, wherever it ran, carries on elsewhere.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { audit } from '../faults/audit.js';
import { sign } from '../faults/drive.js';
import { eventually, kill, sleep, startWorld, type World } from '../faults/harness.js';
import { call, newOrder } from './world.js';

const PAYMENTS = 20;
let lostAnswers = 0;

describe('a host killed under load', () => {
  let world: World;
  let before = 0;
  beforeAll(async () => {
    world = await startWorld({ temporal: 'postgres', workers: 2, apis: 2, validitySeconds: 600, env: { AUTHCAP_WATCH: '1' } });
    before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
  }, 300_000);
  afterAll(() => world?.stop());

  /** One request until it has an answer that is not "try again": no answer, a 5xx, or its key still in use. */
  async function untilAnswered(method: string, path: string, body: unknown, key: string, firstApi: number) {
    let api = firstApi;
    const deadline = Date.now() + 240_000;
    for (;;) {
      const answer = await call(world, method, path, body, { api, idempotencyKey: key }).catch(() => undefined);
      const retry = !answer || answer.status >= 500 || (answer.status === 409 && answer.body?.error?.code === 'idempotency_key_in_use');
      if (!retry) return answer!;
      if (Date.now() > deadline)
        throw new Error(`${method} ${path}: no answer but ${answer ? `${answer.status} ${JSON.stringify(answer.body)}` : 'none'} after 240 s`);
      // The other API, as a load balancer sends a retry elsewhere once one host stops answering.
      api = (api + 1) % world.apiUrls.length;
      await sleep(250);
    }
  }

  async function payment(i: number): Promise<string> {
    const payer = world.payers[i % world.payers.length]!;
    const orderId = newOrder('host');
    let created = await untilAnswered('POST', '/v1/authorizations', { orderId, payer: payer.address, amount: '0.01' }, `create-${orderId}`, i % 2);
    // The create ran, its answer died with its API before it was kept, and the retry ran it again:
    // the order's open authorization is named, and the order service carries on with it.
    if (created.status === 409 && created.body?.error?.code === 'order_has_open_authorization') {
      lostAnswers += 1;
      created = await call(world, 'GET', `/v1/authorizations/${created.body.error.details.id}`, undefined, { api: 0 });
      expect(created.body).toMatchObject({ orderId, state: 'drafted' });
    } else expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const signed = await untilAnswered(
      'POST',
      `/v1/authorizations/${id}/signature`,
      { signature: sign(created.body.typedData, payer.privateKey as Hex) },
      `sign-${orderId}`,
      (i + 1) % 2,
    );
    // The signature ran, its answer died with its API, and the retry ran it again: 409 naming the
    // state it is in (stored), which the order service reads as done.
    if (signed.status === 409 && signed.body?.error?.code === 'invalid_state') {
      lostAnswers += 1;
      expect((await call(world, 'GET', `/v1/authorizations/${id}`, undefined, { api: 0 })).body.state).toMatch(/^(stored|capturing|captured)$/);
    } else expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    const captured = await untilAnswered('POST', `/v1/authorizations/${id}/capture`, {}, `capture-${orderId}`, i % 2);
    expect([200, 202], JSON.stringify(captured.body)).toContain(captured.status);
    return id;
  }

  it(`the second host (worker and API) SIGKILLed while ${PAYMENTS} payments run through both APIs: every one captured, once`, async () => {
    const payments = Array.from({ length: PAYMENTS }, (_, i) => payment(i));
    await sleep(1_500);
    await Promise.all([kill(world.workers[1]!), kill(world.apis[1]!)]);
    const ids = await Promise.all(payments);
    expect(new Set(ids).size).toBe(PAYMENTS);
    if (lostAnswers > 0) console.log(`host killed: ${lostAnswers} answer(s) lost with their API and the request run again`);
    const finals = await Promise.all(
      ids.map((id) =>
        eventually(
          () => world.client.authorizations.get(id),
          (a) => a.state === 'captured',
          180_000,
        ),
      ),
    );
    expect(finals.map((a) => a?.state)).toEqual(ids.map(() => 'captured'));
    const result = await audit(world, ids, { caseName: 'pg host killed', merchantTxBefore: before });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  });
});
