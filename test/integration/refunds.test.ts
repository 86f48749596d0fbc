// Refunds (issue 18) through the HTTP API with real wallet signatures: the merchant key that received
// a capture gives money back to the payer with its own signed transferWithAuthorization. The
// acceptance scenarios run twice: on the suite's shared stack (merchant key shared with every file,
// so the merchant's balance is checked against its Transfer logs in the window) and on an isolated
// chain with a worker and API of this file's own (merchant key exclusive: balances and transaction
// counts are exact). What would break other files (pausing the token, blacklisting or draining the
// merchant, taking its gas) runs only on the isolated chain; the payer, always a fresh key of the
// test's own, may be blacklisted on the shared one.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import proto from '@temporalio/proto';
import { parseEther } from 'viem';
import { AuthcapClient } from '../../client/authcapClient.js';
import { verifyWebhook } from '../../runtime/webhookSignature.js';
import { AuthcapError } from '../../domain/errors.js';
import { parseResourceId, resourceId } from '../../domain/ids.js';
import { REFUNDS_WORKFLOW_TYPE, refundsWorkflowId } from '../../domain/refunds.js';
import { refundUpdate, type RefundsWorkflowInput } from '../../workflows/refundMessages.js';
import { type ApplicationFailure, WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { AmountRefundedMinorAttribute, OrderIdAttribute, PayerAttribute, RefundStatesAttribute } from '../../domain/searchAttributes.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { api, dev, newOrderId } from '../support/api.js';
import { authorizationMessage, ethersSign, sleep, tokenDomain } from '../support/lifecycle.js';
import {
  awaitStateChange,
  balanceAt,
  call,
  captureIn,
  capturedIn,
  draftIn,
  expectChainAgreesWithRefunds,
  expectMoneyMoved,
  expectNothingSent,
  expectRefundOnchain,
  expectRefundShape,
  feedFor,
  forOrder,
  getAuthorizationIn,
  getRefundIn,
  idempotencyKey,
  listRefundsIn,
  mark,
  moveMerchantTokens,
  newPayer,
  postRefund,
  refund,
  refundOutcome,
  refundsClient,
  sharedWorld,
  startIsolatedWorld,
  storedIn,
  tokens,
  type IsolatedWorld,
  type Refund,
  type World,
} from '../support/refunds.js';
import { expectApiError } from '../support/sideEffects.js';
import { connectTemporal } from '../support/temporal.js';
import { startReceiver, type Receiver } from '../support/webhookReceiver.js';

const EventType = proto.temporal.api.enums.v1.EventType;

let isolated: IsolatedWorld;
const worlds: Record<'shared' | 'isolated', () => World> = { shared: sharedWorld, isolated: () => isolated };

beforeAll(async () => {
  isolated = await startIsolatedWorld('refunds');
}, 180_000);

afterAll(async () => {
  await isolated?.stop();
});

/** The authorization's refund amounts, as GET reads them. */
async function amounts(world: World, id: string) {
  const a = await getAuthorizationIn(world, id);
  return { state: a.state, amountCaptured: a.amountCaptured, amountRefunded: a.amountRefunded };
}

describe.each(['shared', 'isolated'] as const)('refunds on the %s stack', (name) => {
  const w = () => worlds[name]();

  it('ACCEPTANCE: a 12.50 capture refunded 3.00, then the rest: both balances back where they started; a third refund is 422 and sends nothing', async () => {
    const world = w();
    const p = await newPayer(world);
    const start = await mark(world, p.address);

    const s = await storedIn(world, p, '12.50');
    expect({ amountCaptured: s.amountCaptured, amountRefunded: s.amountRefunded }).toEqual({ amountCaptured: '0', amountRefunded: '0' });
    const { final: captured } = await captureIn(world, s.id);
    const merchant = captured.authorization!.to;
    expect(merchant.toLowerCase()).toBe(world.merchant.toLowerCase());
    expect(captured).toMatchObject({ state: 'captured', amount: '12.5', amountCaptured: '12.5', amountRefunded: '0' });
    expect(captured.capture!.amount).toBe('12.5');
    await expectMoneyMoved(world, start, { payer: -tokens('12.5'), merchant: tokens('12.5') });
    expect(await listRefundsIn(world, s.id)).toEqual([]);

    const first = await refund(world, s.id, { amount: '3.00', reason: 'one item arrived damaged' });
    expectRefundShape(first, { authorizationId: s.id, orderId: s.orderId, amount: '3', reason: 'one item arrived damaged', state: 'succeeded' });
    const firstNonce = await expectRefundOnchain(world, first, p.address, merchant, tokens('3'));
    expect(await amounts(world, s.id)).toEqual({ state: 'captured', amountCaptured: '12.5', amountRefunded: '3' });

    // No amount: all that is left.
    const rest = await refund(world, s.id, {});
    expectRefundShape(rest, { authorizationId: s.id, orderId: s.orderId, amount: '9.5', reason: null, state: 'succeeded' });
    const restNonce = await expectRefundOnchain(world, rest, p.address, merchant, tokens('9.5'));
    expect(restNonce).not.toBe(firstNonce);
    expect(rest.id).not.toBe(first.id);
    expect(await amounts(world, s.id)).toEqual({ state: 'captured', amountCaptured: '12.5', amountRefunded: '12.5' });

    // Listed in order, each as GET /v1/refunds/{id} reads it.
    expect(await listRefundsIn(world, s.id)).toEqual([first, rest]);
    expect(await getRefundIn(world, first.id)).toEqual(first);
    expect(await getRefundIn(world, rest.id)).toEqual(rest);

    // Measured from before the authorization: the payer and the merchant are back where they started.
    await expectMoneyMoved(world, start, { payer: 0n, merchant: 0n });
    if (world.exclusiveMerchant) {
      const end = await mark(world, p.address, merchant);
      expect({ payer: end.payerBalance, merchant: end.merchantBalance }).toEqual({ payer: start.payerBalance, merchant: start.merchantBalance });
    }

    // Nothing is left: a third refund (no body at all, read as `{}`) and any amount are refused, and send nothing.
    await expectNothingSent(world, p.address, merchant, async () => {
      expectApiError(await postRefund(world, s.id), 422, 'refund_exceeds_captured');
      expectApiError(await postRefund(world, s.id, { amount: '0.000001' }), 422, 'refund_exceeds_captured');
    });
    expect(await listRefundsIn(world, s.id)).toEqual([first, rest]);
    expect(await amounts(world, s.id)).toEqual({ state: 'captured', amountCaptured: '12.5', amountRefunded: '12.5' });
  }, 180_000);

  it('ACCEPTANCE: 20 refunds of 1.00 at once on a 12.50 capture: exactly 12 succeed, 8 are 422, 12.00 moved, 12 listed', async () => {
    const world = w();
    const p = await newPayer(world);
    const captured = await capturedIn(world, p, '12.50');
    const merchant = captured.authorization!.to;
    const afterCapture = await mark(world, p.address, merchant);

    const answers = await Promise.all(Array.from({ length: 20 }, () => postRefund(world, captured.id, { amount: '1.00' })));
    const outcome = answers.map((a) => (a.status === 422 ? a.body?.error?.code : a.status === 201 || a.status === 202 ? 'accepted' : `${a.status}`));
    const accepted = answers.filter((a) => a.status === 201 || a.status === 202);
    // First what became of every accepted one, and whether the chain agrees, so a wrong count says what it cost.
    const finals = await Promise.all(accepted.map((a) => refundOutcome(world, a)));
    const story = `answers: ${outcome.join(', ')}; final states: ${finals.map((r) => r.state).join(', ')}; amountRefunded: ${(await amounts(world, captured.id)).amountRefunded}`;
    await expectChainAgreesWithRefunds(world, afterCapture, finals);
    const paid = finals.filter((r) => r.state === 'succeeded').length;
    expect(paid, `never more than was captured (12.50) goes back. ${story}`).toBeLessThanOrEqual(12);
    expect(outcome.filter((o) => o === 'accepted').length, story).toBe(12);
    expect(outcome.filter((o) => o === 'refund_exceeds_captured').length, story).toBe(8);
    for (const refused of answers.filter((a) => a.status === 422)) expectApiError(refused, 422, 'refund_exceeds_captured');
    for (const r of finals) expectRefundShape(r, { authorizationId: captured.id, orderId: captured.orderId, amount: '1', reason: null, state: 'succeeded' });
    expect(new Set(finals.map((r) => r.id)).size).toBe(12);
    expect(new Set(finals.map((r) => r.transactionHash)).size).toBe(12);
    const nonces = [];
    for (const r of finals) nonces.push(await expectRefundOnchain(world, r, p.address, merchant, tokens('1')));
    expect(new Set(nonces).size).toBe(12);

    const listed = await listRefundsIn(world, captured.id);
    expect(listed).toHaveLength(12);
    expect(listed.map((r) => r.id).sort()).toEqual(finals.map((r) => r.id).sort());
    expect(listed.every((r) => r.state === 'succeeded')).toBe(true);
    expect(await amounts(world, captured.id)).toEqual({ state: 'captured', amountCaptured: '12.5', amountRefunded: '12' });
    await expectMoneyMoved(world, afterCapture, { payer: tokens('12'), merchant: -tokens('12') });

    // What is left after the race is exactly 0.50.
    expectApiError(await postRefund(world, captured.id, { amount: '1' }), 422, 'refund_exceeds_captured');
    const last = await refund(world, captured.id, {});
    expectRefundShape(last, { amount: '0.5', state: 'succeeded' });
    expect(await amounts(world, captured.id)).toEqual({ state: 'captured', amountCaptured: '12.5', amountRefunded: '12.5' });
    expect(await listRefundsIn(world, captured.id)).toHaveLength(13);
    await expectMoneyMoved(world, afterCapture, { payer: tokens('12.5'), merchant: -tokens('12.5') });
  }, 240_000);

  it('ACCEPTANCE: the same Idempotency-Key twice, in turn and at once, is one refund with the same answer; another body with it is 409', async () => {
    const world = w();
    const p = await newPayer(world);
    const captured = await capturedIn(world, p, '5');
    const merchant = captured.authorization!.to;
    const afterCapture = await mark(world, p.address, merchant);

    // In turn.
    const key = idempotencyKey('refund-seq');
    const body = { amount: '2', reason: 'returned one' };
    const first = await postRefund(world, captured.id, body, { idempotencyKey: key });
    const second = await postRefund(world, captured.id, body, { idempotencyKey: key });
    expect([201, 202], JSON.stringify(second.body)).toContain(second.status);
    expect(second.body.id).toBe(first.body.id);
    if (first.status === 201) {
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      expect(second.headers?.get('idempotent-replayed')).toBe('true');
    }
    const done = await refundOutcome(world, first);
    expectRefundShape(done, { amount: '2', reason: 'returned one', state: 'succeeded' });
    // Once final, the key answers with the final refund; the order of the body's keys does not matter.
    const third = await postRefund(world, captured.id, { reason: 'returned one', amount: '2' }, { idempotencyKey: key });
    expect(third.status, JSON.stringify(third.body)).toBe(201);
    expect(third.body).toEqual(done);
    // Another request with the key is refused and sends nothing.
    await expectNothingSent(world, p.address, merchant, async () => {
      expectApiError(await postRefund(world, captured.id, { amount: '1', reason: 'returned one' }, { idempotencyKey: key }), 409, 'idempotency_key_reused');
      expectApiError(await postRefund(world, captured.id, {}, { idempotencyKey: key }), 409, 'idempotency_key_reused');
    });
    expect(await listRefundsIn(world, captured.id)).toEqual([done]);

    // At once: every answer is that one refund, or 409 idempotency_key_in_use while the first runs.
    const concurrentKey = idempotencyKey('refund-par');
    const racing = await Promise.all(Array.from({ length: 6 }, () => postRefund(world, captured.id, { amount: '1' }, { idempotencyKey: concurrentKey })));
    const winners = racing.filter((r) => r.status === 201 || r.status === 202);
    const busy = racing.filter((r) => !(r.status === 201 || r.status === 202));
    expect(winners.length, racing.map((r) => r.status).join(', ')).toBeGreaterThanOrEqual(1);
    for (const b of busy) expectApiError(b, 409, 'idempotency_key_in_use');
    expect(new Set(winners.map((r) => r.body.id)).size).toBe(1);
    const raced = await refundOutcome(world, winners[0]!);
    expectRefundShape(raced, { amount: '1', reason: null, state: 'succeeded' });
    const again = await postRefund(world, captured.id, { amount: '1' }, { idempotencyKey: concurrentKey });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(raced);

    expect(await listRefundsIn(world, captured.id)).toEqual([done, raced]);
    expect(await amounts(world, captured.id)).toEqual({ state: 'captured', amountCaptured: '5', amountRefunded: '3' });
    await expectMoneyMoved(world, afterCapture, { payer: tokens('3'), merchant: -tokens('3') });
  }, 180_000);
});

describe('bursts of concurrent refunds', () => {
  /** One burst of 20 concurrent 1.00 refunds on a 12.50 capture; returns what went wrong, if anything. */
  async function burst(world: World, round: number): Promise<string[]> {
    const problems: string[] = [];
    const say = (what: string) => problems.push(`${world.name} round ${round}: ${what}`);
    const p = await newPayer(world);
    const captured = await capturedIn(world, p, '12.50');
    const since = await mark(world, p.address, captured.authorization!.to);
    const answers = await Promise.all(Array.from({ length: 20 }, () => postRefund(world, captured.id, { amount: '1.00' })));
    for (const a of answers.filter((x) => ![201, 202, 422].includes(x.status))) say(`answered ${a.status} ${JSON.stringify(a.body)}`);
    for (const a of answers.filter((x) => x.status === 422 && x.body?.error?.code !== 'refund_exceeds_captured')) say(`422 ${a.body?.error?.code}`);
    const accepted = answers.filter((x) => x.status === 201 || x.status === 202);
    const finals: Refund[] = [];
    for (const outcome of await Promise.allSettled(accepted.map((a) => refundOutcome(world, a)))) {
      if (outcome.status === 'fulfilled') finals.push(outcome.value);
      else say(String(outcome.reason).slice(0, 300));
    }
    try {
      await expectChainAgreesWithRefunds(world, since, finals);
    } catch (err) {
      say(String(err).slice(0, 600));
    }
    const states = finals.map((r) => (r.failure ? `failed:${r.failure.code}` : r.state));
    if (accepted.length !== 12 || states.some((x) => x !== 'succeeded')) say(`accepted ${accepted.length} (expected 12), final states ${states.join(', ')}`);
    const a = await getAuthorizationIn(world, captured.id);
    if (a.amountRefunded !== '12') say(`amountRefunded ${a.amountRefunded} (expected 12)`);
    return problems;
  }

  it('4 rounds of 20 concurrent refunds, on the shared and the isolated stack at once: no 5xx, each refund final, the chain agrees with authcap, 12.00 and no more goes back', async () => {
    const problems: string[] = [];
    for (let round = 1; round <= 4; round += 1) {
      for (const found of await Promise.all([burst(sharedWorld(), round), burst(isolated, round)])) problems.push(...found);
    }
    expect(problems).toEqual([]);
  }, 600_000);
});

describe('refusals', () => {
  const world = () => sharedWorld();

  it('409 invalid_state while drafted, stored and after a void; nothing recorded or sent; the list is empty', async () => {
    const p = await newPayer(world());
    const drafted = await draftIn(world(), p, '2');
    expect({ amountCaptured: drafted.amountCaptured, amountRefunded: drafted.amountRefunded }).toEqual({ amountCaptured: '0', amountRefunded: '0' });
    await expectNothingSent(world(), p.address, world().merchant, async () => {
      expectApiError(await postRefund(world(), drafted.id, { amount: '1' }), 409, 'invalid_state');
      expectApiError(await postRefund(world(), drafted.id, {}), 409, 'invalid_state');
    });
    expect(await listRefundsIn(world(), drafted.id)).toEqual([]);
    await call(world(), 'POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'test cleanup' });

    const s = await storedIn(world(), p, '2');
    await expectNothingSent(world(), p.address, world().merchant, async () => {
      expectApiError(await postRefund(world(), s.id, { amount: '1' }), 409, 'invalid_state');
    });
    const voided = await call(world(), 'POST', `/v1/authorizations/${s.id}/void`, { reason: 'customer changed their mind' });
    expect(voided.status).toBe(200);
    expect(voided.body).toMatchObject({ state: 'voided', amountCaptured: '0', amountRefunded: '0' });
    await expectNothingSent(world(), p.address, world().merchant, async () => {
      expectApiError(await postRefund(world(), s.id, { amount: '1' }), 409, 'invalid_state');
      expectApiError(await postRefund(world(), s.id), 409, 'invalid_state');
    });
    expect(await listRefundsIn(world(), s.id)).toEqual([]);
    expect((await getAuthorizationIn(world(), s.id)).state).toBe('voided');
  });

  it('404 for unknown authorizations and refunds; 400 validation_error for malformed bodies; 403 for an operator POST; operators may read', async () => {
    const p = await newPayer(world());
    const captured = await capturedIn(world(), p, '3');
    const merchant = captured.authorization!.to;

    // Unknown ids.
    const unknownAuth = resourceId(`no-such-order-${randomUUID()}`, randomUUID());
    for (const id of ['auth_nope', unknownAuth]) {
      expectApiError(await postRefund(world(), id, { amount: '1' }), 404, 'not_found');
      expectApiError(await call(world(), 'GET', `/v1/authorizations/${id}/refunds`), 404, 'not_found');
    }
    expectApiError(await call(world(), 'GET', '/v1/refunds/ref_nope'), 404, 'not_found');
    expectApiError(await call(world(), 'GET', `/v1/refunds/${randomUUID()}`), 404, 'not_found');

    // Malformed bodies on a captured authorization (so no state refusal hides them): each refused by name, nothing recorded or sent.
    const malformed: unknown[] = [
      { amount: '0' },
      { amount: '0.000000' },
      { amount: '-1' },
      { amount: '1.1234567' },
      { amount: 'abc' },
      { amount: '' },
      { amount: 1 },
      { amount: null },
      { amount: '1', currency: 'USDC' },
      { amount: '1', reason: 'partial_capture' },
      { reason: 'partial_capture' },
      { amount: '1', reason: 'x'.repeat(501) },
      { amount: '1', reason: 42 },
      ['1'],
      'not json',
    ];
    await expectNothingSent(world(), p.address, merchant, async () => {
      for (const body of malformed) {
        const res = await postRefund(world(), captured.id, body);
        expect({ body, status: res.status, code: res.body?.error?.code }).toEqual({ body, status: 400, code: 'validation_error' });
      }
    });
    expect(await listRefundsIn(world(), captured.id)).toEqual([]);
    expect(await amounts(world(), captured.id)).toEqual({ state: 'captured', amountCaptured: '3', amountRefunded: '0' });

    // An operator key may not refund, but may read.
    const operator = { key: dev().operatorApiKey };
    await expectNothingSent(world(), p.address, merchant, async () => {
      expectApiError(await postRefund(world(), captured.id, { amount: '1' }, operator), 403, 'forbidden');
    });
    expect(await listRefundsIn(world(), captured.id)).toEqual([]);

    // A reason of 500 characters is fine; the refund succeeds.
    const ok = await refund(world(), captured.id, { amount: '1', reason: 'r'.repeat(500) });
    expectRefundShape(ok, { amount: '1', reason: 'r'.repeat(500), state: 'succeeded' });
    const listedByOperator = await call(world(), 'GET', `/v1/authorizations/${captured.id}/refunds`, undefined, operator);
    expect(listedByOperator.status).toBe(200);
    expect(listedByOperator.body).toEqual({ data: [ok] });
    const readByOperator = await call(world(), 'GET', `/v1/refunds/${ok.id}`, undefined, operator);
    expect(readByOperator.status).toBe(200);
    expect(readByOperator.body).toEqual(ok);
    expect((await call(world(), 'GET', `/v1/authorizations/${captured.id}`, undefined, operator)).body.amountRefunded).toBe('1');

    // No key at all: 401 for both.
    expect((await postRefund(world(), captured.id, { amount: '1' }, { key: null })).status).toBe(401);
    expect((await call(world(), 'GET', `/v1/refunds/${ok.id}`, undefined, { key: null })).status).toBe(401);

    // A refund id in the right form, of this authorization, that does not exist.
    const sibling = ok.id.replace(/\.(\d+)$/, (_, n: string) => `.${Number(n) + 50}`);
    expect(sibling).not.toBe(ok.id);
    expectApiError(await call(world(), 'GET', `/v1/refunds/${sibling}`), 404, 'not_found');
  }, 120_000);
});

describe('the refund limit (isolated chain: 100 refunds keep its merchant key busy, not the shared one)', () => {
  it('100 refunds of 0.000001 on one authorization are all accepted and paid; the 101st is 422 refund_limit_reached and sends nothing', async () => {
    const world = isolated;
    const p = await newPayer(world);
    const captured = await capturedIn(world, p, '1');
    const merchant = captured.authorization!.to;
    const afterCapture = await mark(world, p.address, merchant);

    const answers = await Promise.all(Array.from({ length: 100 }, () => postRefund(world, captured.id, { amount: '0.000001' })));
    try {
      // Every one is accepted (the limit is not reached yet, 1.00 leaves room for all): no 5xx under the burst.
      expect(answers.filter((a) => a.status !== 201 && a.status !== 202).map((a) => `${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
      const finals = await Promise.all(answers.map((a) => refundOutcome(world, a)));
      // Whatever became of each, the chain and authcap agree (a refund recorded failed moved nothing).
      await expectChainAgreesWithRefunds(world, afterCapture, finals);
      expect(finals.filter((r) => r.state !== 'succeeded').map((r) => JSON.stringify(r))).toEqual([]);
      expect(new Set(finals.map((r) => r.id)).size).toBe(100);
      expect(new Set(finals.map((r) => r.transactionHash)).size).toBe(100);

      await expectNothingSent(world, p.address, merchant, async () => {
        expectApiError(await postRefund(world, captured.id, { amount: '0.000001' }), 422, 'refund_limit_reached');
        expectApiError(await postRefund(world, captured.id, {}), 422, 'refund_limit_reached');
      });
      expect(await listRefundsIn(world, captured.id)).toHaveLength(100);
      expect(await amounts(world, captured.id)).toEqual({ state: 'captured', amountCaptured: '1', amountRefunded: '0.0001' });
      await expectMoneyMoved(world, afterCapture, { payer: 100n, merchant: -100n });
    } finally {
      // The tests after this one share the isolated chain's merchant key: what was accepted finishes first, pass or fail.
      await vi.waitFor(async () => expect((await listRefundsIn(world, captured.id)).filter((r) => r.state === 'pending')).toEqual([]), {
        timeout: 180_000,
        interval: 1_000,
      });
    }
  }, 300_000);
});

describe('a refund that fails records state failed with failure.code, moves nothing, and can be retried (isolated chain)', () => {
  it('insufficient_merchant_balance while the merchant key holds too little; the same key replays the failure; a new request succeeds after a top-up', async () => {
    const world = isolated;
    const p = await newPayer(world);
    const captured = await capturedIn(world, p, '5');
    const merchant = captured.authorization!.to;
    expect(merchant.toLowerCase()).toBe(world.chain.merchant.address.toLowerCase());

    // The merchant's tokens go elsewhere (its own signed authorization, relayed by the token owner), 1.00 left.
    const held = await balanceAt(world, merchant);
    expect(held).toBeGreaterThanOrEqual(tokens('5'));
    const away = held - tokens('1');
    await moveMerchantTokens(world, world.chain.merchant.privateKey, world.chain.owner.address, away);

    const before = await mark(world, p.address, merchant);
    const key = idempotencyKey('refund-broke');
    const failed = await refund(world, captured.id, { amount: '2', reason: 'broke merchant' }, { idempotencyKey: key });
    expectRefundShape(failed, { authorizationId: captured.id, orderId: captured.orderId, amount: '2', reason: 'broke merchant', state: 'failed' });
    expect(failed.failure!.code).toBe('insufficient_merchant_balance');
    await expectMoneyMoved(world, before, { payer: 0n, merchant: 0n });
    expect(await amounts(world, captured.id)).toEqual({ state: 'captured', amountCaptured: '5', amountRefunded: '0' });
    expect(await listRefundsIn(world, captured.id)).toEqual([failed]);

    // The tokens come back. The same key is the same (failed) refund, not a new attempt.
    await world.ownerWrite('mint', [merchant, away]);
    const replay = await postRefund(world, captured.id, { amount: '2', reason: 'broke merchant' }, { idempotencyKey: key });
    expect(replay.status, JSON.stringify(replay.body)).toBe(201);
    expect(replay.body).toEqual(failed);

    // A new request succeeds; a failed refund holds nothing back, so "all that is left" is all 5.
    const afterTopUp = await mark(world, p.address, merchant);
    const retried = await refund(world, captured.id, {}, { idempotencyKey: idempotencyKey('refund-retry') });
    expectRefundShape(retried, { amount: '5', reason: null, state: 'succeeded' });
    await expectRefundOnchain(world, retried, p.address, merchant, tokens('5'));
    expect(retried.id).not.toBe(failed.id);
    expect(await listRefundsIn(world, captured.id)).toEqual([failed, retried]);
    expect(await amounts(world, captured.id)).toEqual({ state: 'captured', amountCaptured: '5', amountRefunded: '5' });
    await expectMoneyMoved(world, afterTopUp, { payer: tokens('5'), merchant: -tokens('5') });
  }, 180_000);

  it('token_policy_blocked while the token is paused; succeeds after unpause', async () => {
    const world = isolated;
    const p = await newPayer(world);
    const captured = await capturedIn(world, p, '3');
    const merchant = captured.authorization!.to;
    const before = await mark(world, p.address, merchant);
    let failed: Refund;
    await world.ownerWrite('pause', []);
    try {
      failed = await refund(world, captured.id, { amount: '1' });
    } finally {
      await world.ownerWrite('unpause', []);
    }
    expectRefundShape(failed, { amount: '1', state: 'failed' });
    expect(failed.failure!.code).toBe('token_policy_blocked');
    await expectMoneyMoved(world, before, { payer: 0n, merchant: 0n });
    expect(await amounts(world, captured.id)).toEqual({ state: 'captured', amountCaptured: '3', amountRefunded: '0' });

    const ok = await refund(world, captured.id, { amount: '1' });
    expectRefundShape(ok, { amount: '1', state: 'succeeded' });
    await expectRefundOnchain(world, ok, p.address, merchant, tokens('1'));
    expect(await amounts(world, captured.id)).toEqual({ state: 'captured', amountCaptured: '3', amountRefunded: '1' });
    await expectMoneyMoved(world, before, { payer: tokens('1'), merchant: -tokens('1') });
  }, 120_000);

  it('token_policy_blocked while the merchant is blacklisted; succeeds after unBlacklist', async () => {
    const world = isolated;
    const p = await newPayer(world);
    const captured = await capturedIn(world, p, '3');
    const merchant = captured.authorization!.to;
    const before = await mark(world, p.address, merchant);
    let failed: Refund;
    await world.ownerWrite('blacklist', [merchant]);
    try {
      failed = await refund(world, captured.id, { amount: '2' });
    } finally {
      await world.ownerWrite('unBlacklist', [merchant]);
    }
    expectRefundShape(failed, { amount: '2', state: 'failed' });
    expect(failed.failure!.code).toBe('token_policy_blocked');
    await expectMoneyMoved(world, before, { payer: 0n, merchant: 0n });

    const ok = await refund(world, captured.id, { amount: '2' });
    expectRefundShape(ok, { amount: '2', state: 'succeeded' });
    await expectRefundOnchain(world, ok, p.address, merchant, tokens('2'));
    expect(await listRefundsIn(world, captured.id)).toEqual([failed, ok]);
    await expectMoneyMoved(world, before, { payer: tokens('2'), merchant: -tokens('2') });
  }, 120_000);

  it('insufficient_merchant_gas while the merchant key has no ether; succeeds once it has', async () => {
    const world = isolated;
    const p = await newPayer(world);
    const captured = await capturedIn(world, p, '2');
    const merchant = captured.authorization!.to;
    const before = await mark(world, p.address, merchant);
    const ether = await world.publicClient.getBalance({ address: merchant });
    expect(ether).toBeGreaterThan(parseEther('1'));
    let failed: Refund;
    await world.chain.testClient.setBalance({ address: merchant, value: 1000n });
    try {
      failed = await refund(world, captured.id, { amount: '0.75' });
    } finally {
      await world.chain.testClient.setBalance({ address: merchant, value: ether });
    }
    expectRefundShape(failed, { amount: '0.75', state: 'failed' });
    expect(failed.failure!.code).toBe('insufficient_merchant_gas');
    await expectMoneyMoved(world, before, { payer: 0n, merchant: 0n });
    expect(await amounts(world, captured.id)).toEqual({ state: 'captured', amountCaptured: '2', amountRefunded: '0' });

    const ok = await refund(world, captured.id, { amount: '0.75' });
    expectRefundShape(ok, { amount: '0.75', state: 'succeeded' });
    await expectRefundOnchain(world, ok, p.address, merchant, tokens('0.75'));
    expect(await amounts(world, captured.id)).toEqual({ state: 'captured', amountCaptured: '2', amountRefunded: '0.75' });
  }, 120_000);
});

describe('events: webhooks and the feed (shared stack)', () => {
  let receiver: Receiver;
  let endpoint: { id: string; secret: string };
  const world = () => sharedWorld();

  beforeAll(async () => {
    receiver = await startReceiver();
    const res = await api('POST', '/v1/webhook_endpoints', {
      url: receiver.url,
      events: ['refund.created', 'refund.succeeded', 'refund.failed', 'authorization.captured'],
      description: 'refunds.test',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    endpoint = res.body;
  });

  afterAll(async () => {
    if (endpoint) await api('DELETE', `/v1/webhook_endpoints/${endpoint.id}`);
    await receiver?.close();
  });

  const refundEventsFor = (orderId: string) => receiver.accepted((e) => forOrder(orderId)(e) && String(e.type).startsWith('refund.'));

  it('refund.created then refund.succeeded: data.object is the refund, data.authorization has amountRefunded; signed; the feed has the same', async () => {
    const p = await newPayer(world());
    const captured = await capturedIn(world(), p, '12.50');
    const r = await refund(world(), captured.id, { amount: '3', reason: 'webhook' });
    expect(r.state).toBe('succeeded');

    const events = await vi.waitFor(
      () => {
        const got = refundEventsFor(captured.orderId);
        expect(got.map((e) => e.type)).toEqual(['refund.created', 'refund.succeeded']);
        return got;
      },
      { timeout: 20_000, interval: 200 },
    );
    const [created, succeeded] = events;
    for (const e of events) {
      expect(Object.keys(e).sort()).toEqual(['createdAt', 'data', 'id', 'orderId', 'type']);
      expect(Object.keys(e.data).sort()).toEqual(['authorization', 'object']);
      expect(e.orderId).toBe(captured.orderId);
      expect(e.data.object.id).toBe(r.id);
      expect(e.data.authorization.id).toBe(captured.id);
      expect(e.data.authorization).toMatchObject({ state: 'captured', orderId: captured.orderId, amountCaptured: '12.5' });
    }
    expectRefundShape(created.data.object, { id: r.id, amount: '3', reason: 'webhook', state: 'pending' });
    expect(created.data.authorization.amountRefunded).toBe('0');
    expect(succeeded.data.object).toEqual(r);
    expect(succeeded.data.authorization.amountRefunded).toBe('3');
    expect(new Set(events.map((e) => e.id)).size).toBe(2);

    for (const d of receiver.deliveries.filter((x) => events.some((e) => e.id === x.eventId))) {
      expect(verifyWebhook(d.body, d.headers['authcap-signature'], endpoint.secret).id).toBe(d.eventId);
    }

    // The feed, after its hold-back: by type, and the order's whole story with the refund after the capture.
    const bySucceeded = await feedFor(world(), captured.orderId, (data) => data.length >= 1, 'refund.succeeded');
    expect(bySucceeded).toEqual([succeeded]);
    const all = await feedFor(world(), captured.orderId, (data) => data.some((e) => e.type === 'refund.succeeded'));
    const types = all.map((e) => e.type);
    expect(types.indexOf('authorization.captured')).toBeGreaterThanOrEqual(0);
    expect(types.indexOf('authorization.captured')).toBeLessThan(types.indexOf('refund.created'));
    expect(types.indexOf('refund.created')).toBeLessThan(types.indexOf('refund.succeeded'));
    expect(all.filter((e) => e.type.startsWith('refund.'))).toEqual(events);

    // data.authorization says where the authorization stands, not its whole record: a refunds ledger
    // keeps up to 300 events in its memo, so each carries what a receiver acts on and no more.
    expect(Object.keys(succeeded.data.authorization).sort(), 'refund.succeeded data.authorization fields').toEqual([
      'amount',
      'amountCaptured',
      'amountRefunded',
      'id',
      'orderId',
      'state',
    ]);
    expect(succeeded.data.authorization).toEqual({
      id: captured.id,
      orderId: captured.orderId,
      state: 'captured',
      amount: captured.amount,
      amountCaptured: '12.5',
      amountRefunded: '3',
    });
  }, 120_000);

  it('token_policy_blocked while the payer is blacklisted: refund.failed with the failure, nothing moved; after unBlacklist a new refund succeeds; the refunds workflow is searchable', async () => {
    const p = await newPayer(world());
    const captured = await capturedIn(world(), p, '4');
    const merchant = captured.authorization!.to;
    const before = await mark(world(), p.address, merchant);
    let failed: Refund;
    await world().ownerWrite('blacklist', [p.address]);
    try {
      failed = await refund(world(), captured.id, { amount: '4', reason: 'blocked' });
    } finally {
      await world().ownerWrite('unBlacklist', [p.address]);
    }
    expectRefundShape(failed, { authorizationId: captured.id, amount: '4', reason: 'blocked', state: 'failed' });
    expect(failed.failure!.code).toBe('token_policy_blocked');
    await expectMoneyMoved(world(), before, { payer: 0n, merchant: 0n });
    expect(await amounts(world(), captured.id)).toEqual({ state: 'captured', amountCaptured: '4', amountRefunded: '0' });

    const failedEvents = await vi.waitFor(
      () => {
        const got = refundEventsFor(captured.orderId);
        expect(got.map((e) => e.type)).toEqual(['refund.created', 'refund.failed']);
        return got;
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(failedEvents[1].data.object).toEqual(failed);
    expect(failedEvents[1].data.authorization).toMatchObject({ id: captured.id, amountCaptured: '4', amountRefunded: '0' });

    const ok = await refund(world(), captured.id, {});
    expectRefundShape(ok, { amount: '4', state: 'succeeded' });
    await expectRefundOnchain(world(), ok, p.address, merchant, tokens('4'));
    await expectMoneyMoved(world(), before, { payer: tokens('4'), merchant: -tokens('4') });
    await vi.waitFor(
      () => expect(refundEventsFor(captured.orderId).map((e) => e.type)).toEqual(['refund.created', 'refund.failed', 'refund.created', 'refund.succeeded']),
      { timeout: 20_000, interval: 200 },
    );
    const last = refundEventsFor(captured.orderId).at(-1);
    expect(last.data.object).toEqual(ok);
    expect(last.data.authorization.amountRefunded).toBe('4');
    const feedFailed = await feedFor(world(), captured.orderId, (data) => data.length >= 1, 'refund.failed');
    expect(feedFailed.map((e) => e.id)).toEqual([failedEvents[1].id]);

    // Temporal: one refunds workflow for the authorization, with the refund ledger's search attributes.
    const temporal = await connectTemporal();
    try {
      const { runId } = parseResourceId(captured.id)!;
      await vi.waitFor(
        async () => {
          const d = await temporal.workflow.getHandle(refundsWorkflowId(runId)).describe();
          expect(refundsWorkflowId(runId)).toBe(`refunds-${runId}`);
          expect(d.type).toBe('refundsWorkflow');
          expect(d.typedSearchAttributes.get(OrderIdAttribute)).toBe(captured.orderId);
          expect(String(d.typedSearchAttributes.get(PayerAttribute)).toLowerCase()).toBe(p.address.toLowerCase());
          expect(d.typedSearchAttributes.get(AmountRefundedMinorAttribute)).toBe(4_000_000);
          expect([...new Set(d.typedSearchAttributes.get(RefundStatesAttribute) ?? [])].sort()).toEqual(['failed', 'succeeded']);
        },
        { timeout: 10_000, interval: 500 },
      );
    } finally {
      await temporal.connection.close();
    }
  }, 150_000);
});

describe('authorizations captured by another path (shared stack)', () => {
  it('a pre-signed TransferWithAuthorization settled onchain by someone else (captured, by onchain) is refundable up to its amount', async () => {
    const world = sharedWorld();
    const p = await newPayer(world);
    const start = await mark(world, p.address);
    const domain = await tokenDomain();
    const message = authorizationMessage(p.address, tokens('3'));
    const signature = await ethersSign('TransferWithAuthorization', domain, message, p.privateKey);
    const created = await call(world, 'POST', '/v1/authorizations', {
      orderId: newOrderId('refund-onchain'),
      primaryType: 'TransferWithAuthorization',
      authorization: message,
      signature,
      domain,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id: string = created.body.id;
    // Before it is captured, a refund is refused.
    expectApiError(await postRefund(world, id, { amount: '1' }), 409, 'invalid_state');

    const settled = await world.ownerWrite('transferWithAuthorization', [
      message.from,
      message.to,
      BigInt(message.value),
      BigInt(message.validAfter),
      BigInt(message.validBefore),
      message.nonce,
      signature,
    ]);
    const captured = await awaitStateChange(world, id, 'stored', 30_000);
    expect(captured).toMatchObject({ state: 'captured', amount: '3', amountCaptured: '3', amountRefunded: '0' });
    expect(captured.capture).toMatchObject({ by: 'onchain', transactionHash: settled.transactionHash });

    const r = await refund(world, id, { amount: '1', reason: 'after an outside settlement' });
    expectRefundShape(r, { authorizationId: id, amount: '1', state: 'succeeded' });
    await expectRefundOnchain(world, r, p.address, message.to, tokens('1'));
    expectApiError(await postRefund(world, id, { amount: '2.000001' }), 422, 'refund_exceeds_captured');
    const rest = await refund(world, id, {});
    expectRefundShape(rest, { amount: '2', state: 'succeeded' });
    expect(await amounts(world, id)).toEqual({ state: 'captured', amountCaptured: '3', amountRefunded: '3' });
    await expectMoneyMoved(world, start, { payer: 0n, merchant: 0n });
  }, 120_000);
});

describe('Temporal: the refunds workflow', () => {
  it('one refunds-<authorization run id> workflow (refundsWorkflow) keeps its totals under `ledger` and each refund under its own memo key', async () => {
    const world = sharedWorld();
    const p = await newPayer(world);
    const captured = await capturedIn(world, p, '2');
    const r = await refund(world, captured.id, { amount: '0.5' });
    expect(r.state).toBe('succeeded');
    const { runId } = parseResourceId(captured.id)!;
    const temporal = await connectTemporal();
    try {
      const d = await vi.waitFor(
        async () => {
          const described = await temporal.workflow.getHandle(refundsWorkflowId(runId)).describe();
          expect(described.type).toBe('refundsWorkflow');
          expect(described.typedSearchAttributes.get(AmountRefundedMinorAttribute)).toBe(500_000);
          return described;
        },
        { timeout: 10_000, interval: 500 },
      );
      // The ledger, each refund under its own key, and its events, each under its own.
      expect(Object.keys(d.memo ?? {}).sort(), 'the refunds workflow memo keys').toEqual(['event-0001', 'event-0002', 'ledger', 'refund-001']);
      expect([d.memo?.['event-0001'], d.memo?.['event-0002']].map((e) => (e as { type: string }).type)).toEqual(['refund.created', 'refund.succeeded']);
      expect(d.memo?.['refund-001']).toMatchObject({ sequence: 1, stage: 'succeeded', amountMinor: '500000' });
      expect(d.memo?.ledger).toMatchObject({ amountCapturedMinor: '2000000', amountRefundedMinor: '500000' });
    } finally {
      await temporal.connection.close();
    }
  }, 60_000);
  it('a refund asked for after its window is refused in the validator (409 invalid_state), leaving no trace in history; the workflow then closes', async () => {
    const temporal = await connectTemporal();
    const { taskQueue } = loadTemporalSettings();
    const runId = randomUUID();
    const orderId = newOrderId('refund-window');
    const payer = '0x00000000000000000000000000000000000000a1' as const;
    const input: RefundsWorkflowInput = {
      authorizationRunId: runId,
      orderId,
      payer,
      merchant: '0x00000000000000000000000000000000000000b2',
      amountCapturedMinor: '5000000',
      capturedAt: new Date(Date.now() - 31 * 86_400_000).toISOString(),
      refundableUntil: new Date(Date.now() - 86_400_000).toISOString(),
      // As the API sends it: a ledger starts only from a fresh request.
      requestedAt: new Date().toISOString(),
      authorization: { id: resourceId(orderId, runId), orderId, state: 'captured', amount: '5', amountCaptured: '5', amountRefunded: '0' },
    };
    try {
      const refused = await temporal.workflow
        .executeUpdateWithStart(refundUpdate, {
          args: [{ amountMinor: '1000000', reason: null, requestKey: randomUUID(), requestFingerprint: 'f' }],
          startWorkflowOperation: new WithStartWorkflowOperation(REFUNDS_WORKFLOW_TYPE, {
            workflowId: refundsWorkflowId(runId),
            taskQueue,
            args: [input],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
      expect(((refused as WorkflowUpdateFailedError).cause as ApplicationFailure).type).toBe('invalid_state');
      expect(((refused as WorkflowUpdateFailedError).cause as ApplicationFailure).message).toMatch(/refunds for this authorization closed at/);
      const handle = temporal.workflow.getHandle(refundsWorkflowId(runId));
      const ledger = await handle.result();
      expect(ledger).toMatchObject({ open: false, amountRefundedMinor: '0', refunds: [] });
      const history = await handle.fetchHistory();
      const types = (history.events ?? []).map((e) => e.eventType);
      expect(types).toContain(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
      const traces = [
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
        EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      ];
      expect(
        types.filter((t) => traces.includes(t!)),
        'no update and no activity in history',
      ).toEqual([]);
    } finally {
      await temporal.connection.close();
    }
  }, 60_000);
});

describe('the typed client (AuthcapClient)', () => {
  it('authorizations.capture({amount}), refunds.create, refunds.get, refunds.list; errors are AuthcapError with the HTTP codes', async () => {
    const d = dev();
    const client = await AuthcapClient.connect(loadTemporalSettings({ address: d.temporalAddress, namespace: d.temporalNamespace }));
    const c = refundsClient(client);
    try {
      const world = sharedWorld();
      const p = await newPayer(world);
      const start = await mark(world, p.address);
      const s = await storedIn(world, p, '10');

      const notYet = await c.refunds.create(s.id, { amount: '1' }).catch((e: unknown) => e);
      expect(notYet).toBeInstanceOf(AuthcapError);
      expect((notYet as AuthcapError).code).toBe('invalid_state');
      const tooMuch = await c.authorizations.capture(s.id, { amount: '10.000001' }).catch((e: unknown) => e);
      expect(tooMuch).toBeInstanceOf(AuthcapError);
      expect((tooMuch as AuthcapError).code).toBe('capture_exceeds_authorized');
      expect((await c.authorizations.get(s.id)).state).toBe('stored');

      const captured = await c.authorizations.capture(s.id, { amount: 8, waitMs: 60_000 });
      expect(captured.settled).toBe(true);
      expect(captured.authorization).toMatchObject({ state: 'captured', amount: '10', amountCaptured: '8', amountRefunded: '0' });
      expect(captured.authorization.capture!.amount).toBe('8');
      const release = await c.refunds.list(s.id);
      expect(release).toHaveLength(1);
      expectRefundShape(release[0], { amount: '2', reason: 'partial_capture', state: 'succeeded', authorizationId: s.id });

      const key = idempotencyKey('client');
      const first = await c.refunds.create(s.id, { amount: 1.5, reason: 'client' }, { waitMs: 60_000, idempotencyKey: key });
      expect(first.settled).toBe(true);
      expectRefundShape(first.refund, { authorizationId: s.id, orderId: s.orderId, amount: '1.5', reason: 'client', state: 'succeeded' });
      const repeated = await c.refunds.create(s.id, { amount: 1.5, reason: 'client' }, { waitMs: 60_000, idempotencyKey: key });
      expect(repeated.refund.id).toBe(first.refund.id);
      expect(await c.refunds.get(first.refund.id)).toEqual(first.refund);
      // The client and the HTTP API read the same refund.
      expect(await getRefundIn(world, first.refund.id)).toEqual(first.refund);

      const over = await c.refunds.create(s.id, { amount: '7' }).catch((e: unknown) => e);
      expect(over).toBeInstanceOf(AuthcapError);
      expect((over as AuthcapError).code).toBe('refund_exceeds_captured');
      const missing = await c.refunds.get('ref_nope').catch((e: unknown) => e);
      expect((missing as AuthcapError).code).toBe('not_found');

      const rest = await c.refunds.create(s.id);
      expectRefundShape(rest.refund, { amount: '6.5', reason: null });
      const restFinal = rest.settled ? rest.refund : await awaitWithClient(c, rest.refund.id);
      expect(restFinal.state).toBe('succeeded');
      const listed = await c.refunds.list(s.id);
      expect(listed.map((r) => [r.amount, r.reason, r.state])).toEqual([
        ['2', 'partial_capture', 'succeeded'],
        ['1.5', 'client', 'succeeded'],
        ['6.5', null, 'succeeded'],
      ]);
      expect(listed).toEqual(await listRefundsIn(world, s.id));
      const a = await c.authorizations.get(s.id);
      expect({ amountCaptured: a.amountCaptured, amountRefunded: a.amountRefunded }).toEqual({ amountCaptured: '8', amountRefunded: '8' });
      // Captured 8, refunded 8: the payer is whole.
      await expectMoneyMoved(world, start, { payer: 0n, merchant: 0n });
    } finally {
      await client.close();
    }
  }, 180_000);

  it("past the refund window (the caller's clock 31 days on): a retry of a refund accepted in time gets that refund; a new one is 409 invalid_state and adds nothing", async () => {
    const d = dev();
    const client = await AuthcapClient.connect(loadTemporalSettings({ address: d.temporalAddress, namespace: d.temporalNamespace }));
    const c = refundsClient(client);
    const temporal = await connectTemporal();
    try {
      const world = sharedWorld();
      const p = await newPayer(world);
      const captured = await capturedIn(world, p, '3');
      const key = idempotencyKey('window');
      const first = await c.refunds.create(captured.id, { amount: '1' }, { idempotencyKey: key, waitMs: 60_000 });
      expect(first.refund.state).toBe('succeeded');
      const ledger = temporal.workflow.getHandle(refundsWorkflowId(parseResourceId(captured.id)!.runId));
      // The refund's last steps may still be landing in the ledger's history: measure once the
      // history has settled, so what follows is judged alone.
      let historyBefore = (await ledger.describe()).historyLength;
      for (let settled = false; !settled; ) {
        await new Promise((r) => setTimeout(r, 500));
        const now = (await ledger.describe()).historyLength;
        settled = now === historyBefore;
        historyBefore = now;
      }

      const realNow = Date.now.bind(Date);
      const later = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 31 * 86_400_000);
      let again: Awaited<ReturnType<typeof c.refunds.create>>;
      let fresh: unknown;
      try {
        again = await c.refunds.create(captured.id, { amount: '1' }, { idempotencyKey: key });
        fresh = await c.refunds.create(captured.id, { amount: '1' }).catch((e: unknown) => e);
      } finally {
        later.mockRestore();
      }
      expect(again.refund).toEqual(first.refund);
      expect(fresh).toBeInstanceOf(AuthcapError);
      expect((fresh as AuthcapError).code).toBe('invalid_state');
      expect((fresh as AuthcapError).message).toMatch(/refunds for this authorization closed at /);
      expect((await ledger.describe()).historyLength).toBe(historyBefore);
      expect((await c.authorizations.get(captured.id)).amountRefunded).toBe('1');
    } finally {
      await temporal.connection.close();
      await client.close();
    }
  }, 120_000);
});

async function awaitWithClient(c: ReturnType<typeof refundsClient>, id: string): Promise<Refund> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await c.refunds.get(id);
    if (r.state !== 'pending' || Date.now() > deadline) return r;
    await sleep(250);
  }
}
