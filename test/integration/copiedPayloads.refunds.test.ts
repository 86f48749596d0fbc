// Issue 35, refunds: a refunds workflow is `refunds-<authorization's first run id>`, and its id is
// the only thing that ties it to its authorization. A client WITHOUT the codec key reads a refunds
// workflow's sealed start input from history and starts another authorization's refunds workflow
// with it (or takes the id with a plain start): the squatter must fail at once, and the merchant's
// real refunds of that authorization must still go, through the API, to its own payer. Checked from
// the chain and the API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { connectTemporal, connectTemporalWithoutKeys } from '../support/temporal.js';
import { plainPayload } from '../support/forgedInputs.js';
import { capturedIn, expectMoneyMoved, mark, newPayer, postRefund, sharedWorld, tokens, type World } from '../support/refunds.js';
import {
  ACTED,
  copiedStartInput,
  copiedUpdateArgs,
  expectRefundBackedByChain,
  runOutcome,
  settledRefund,
  startWithPayloads,
  terminateRun,
  updateWithPayloads,
} from '../support/copiedPayloads.js';
import type { AuthorizationResource } from '../../domain/authorization.js';

let keyless: Client;
let operator: Client;
let world: World;
/** Squatter runs this file started: ended in afterAll if they still run, so none pays anyone later. */
const squatters: { workflowId: string; runId: string }[] = [];

beforeAll(async () => {
  keyless = await connectTemporalWithoutKeys();
  operator = await connectTemporal();
  world = sharedWorld();
});
afterAll(async () => {
  for (const s of squatters) await terminateRun(operator, s.workflowId, s.runId, 'copiedPayloads test: its squatter run');
  await keyless?.connection.close();
  await operator?.connection.close();
});

const runIdOf = (resource: { id: string }) => resource.id.split('.').pop()!;
const refundsIdOf = (resource: { id: string }) => `refunds-${runIdOf(resource)}`;

/** Starts `refunds-<target's run id>` with `input` (copied or plain), as the keyless client; its run id. */
async function squat(target: AuthorizationResource, input: Parameters<typeof startWithPayloads>[1]['input']): Promise<string> {
  const workflowId = refundsIdOf(target);
  const runId = await startWithPayloads(keyless, { workflowId, workflowType: 'refundsWorkflow', taskQueue: 'authcap', input });
  squatters.push({ workflowId, runId });
  return runId;
}

/** A refund asked for through the API, then followed to its end: the API's first answer and the settled refund. */
async function refundThroughApi(authorization: AuthorizationResource, amount: string, what: string) {
  const answer = await postRefund(world, authorization.id, { amount, reason: what });
  expect(answer.status, `${what}: POST refunds answered ${JSON.stringify(answer.body)}`).toBeOneOf([201, 202]);
  const settled = answer.body.state === 'pending' ? await settledRefund(world, answer.body.id) : answer.body;
  return { answer: answer.body, settled };
}

/** A captured authorization (of a payer of the test's own) refunded `amount` through the API, settled. */
async function capturedAndRefunded(captured: string, refunded: string) {
  const p = await newPayer(world, tokens('100'));
  const authorization = await capturedIn(world, p, captured);
  const { settled } = await refundThroughApi(authorization, refunded, 'the source of the copies: a real refund');
  expect(settled.state, JSON.stringify(settled)).toBe('succeeded');
  return { p, authorization, refund: settled };
}

/** Since the mark, the payer received exactly `amount` from the merchant. */
async function paid(since: Awaited<ReturnType<typeof mark>>, amount: string) {
  await expectMoneyMoved(world, since, { payer: tokens(amount), merchant: -tokens(amount) });
}

describe("another authorization's refunds workflow started with a copied start input", () => {
  it("fails at once, refuses the copied refund update, and the merchant's refund of that authorization pays its own payer", { timeout: 150_000 }, async () => {
    // A: captured and refunded once, so its refunds workflow's history holds a sealed start input and a sealed refund update.
    const { p: payerA, authorization: a } = await capturedAndRefunded('1', '0.1');
    const startInput = await copiedStartInput(keyless, refundsIdOf(a));
    const refundArgs = await copiedUpdateArgs(keyless, refundsIdOf(a), 'refund');
    // C: captured, no refund yet.
    const payerC = await newPayer(world, tokens('100'));
    const c = await capturedIn(world, payerC, '1');
    const sinceA = await mark(world, payerA.address);

    const runId = await squat(c, startInput);
    const outcome = await runOutcome(keyless, refundsIdOf(c), runId);
    expect
      .soft(outcome.status, `refunds-<C's run> started with A's sealed input (history: ${outcome.eventTypes.join(', ')})`)
      .toBe('WORKFLOW_EXECUTION_STATUS_FAILED');
    expect.soft(outcome.failureType, "why the squatter's start failed").toBe('unauthenticated_input');
    expect
      .soft(
        outcome.eventTypes.filter((t) => ACTED.test(t)),
        'what the squatter did (activities, timers, external signals, memo, accepted updates)',
      )
      .toEqual([]);

    const update = await updateWithPayloads(keyless, refundsIdOf(c), 'refund', refundArgs);
    expect.soft(update.accepted, `A's copied refund update, sent to refunds-<C's run>: ${JSON.stringify(update)}`).toBe(false);

    // The merchant refunds C through the API: C's payer gets it, A's payer gets nothing.
    const sinceC = await mark(world, payerC.address);
    const { answer, settled } = await refundThroughApi(c, '0.25', "the merchant's refund of C");
    expect.soft(answer.authorizationId, 'the authorization the API says it refunded').toBe(c.id);
    expect(settled.state, `C's refund: ${JSON.stringify(settled)}`).toBe('succeeded');
    await expectRefundBackedByChain(world, settled, payerC.address, "C's refund");
    await paid(sinceC, '0.25');
    // A was not paid again, by the copied update or by C's refund.
    await expectMoneyMoved(world, sinceA, { payer: 0n, merchant: 0n });
  });
});

describe('a squatted refunds workflow (issue 35, finding 2)', () => {
  it("B's refunds through the API pay B's payer, never answer with A's transaction, and A's own later refund pays A's payer", {
    timeout: 180_000,
  }, async () => {
    // A: payer of its own, 10.00 captured, 1.00 refunded.
    const { p: payerA, authorization: a, refund: aRefund } = await capturedAndRefunded('10', '1');
    // B: another payer, 20.00 captured, never refunded.
    const payerB = await newPayer(world, tokens('100'));
    const b = await capturedIn(world, payerB, '20');
    const startInput = await copiedStartInput(keyless, refundsIdOf(a));

    const sinceA = await mark(world, payerA.address);
    const sinceB = await mark(world, payerB.address);
    await squat(b, startInput);

    // The merchant refunds B twice through the API: 5.00, then 4.00.
    const first = await refundThroughApi(b, '5', 'refund 1 of B');
    const second = await refundThroughApi(b, '4', 'refund 2 of B');
    for (const [what, r] of [
      ['refund 1 of B (5.00)', first],
      ['refund 2 of B (4.00)', second],
    ] as const) {
      expect.soft(r.answer.authorizationId, `${what}: the authorization the API says it refunds`).toBe(b.id);
      expect
        .soft(r.answer.state === 'succeeded' && r.answer.transactionHash === aRefund.transactionHash, `${what}: answered succeeded with A's refund transaction`)
        .toBe(false);
      expect.soft(r.settled.state, `${what}: ${JSON.stringify(r.settled)}`).toBe('succeeded');
      await expectRefundBackedByChain(world, r.settled, payerB.address, what, aRefund.transactionHash);
    }
    // B's payer got 9.00 back; A's payer nothing.
    await paid(sinceB, '9');
    await expectMoneyMoved(world, sinceA, { payer: 0n, merchant: 0n });

    // A's own later refund of 2.00 pays A's payer 2.00, with a transfer of its own.
    const sinceA2 = await mark(world, payerA.address);
    const later = await refundThroughApi(a, '2', "A's own later refund");
    expect(later.settled.state, JSON.stringify(later.settled)).toBe('succeeded');
    await expectRefundBackedByChain(world, later.settled, payerA.address, "A's later refund", aRefund.transactionHash);
    await paid(sinceA2, '2');
  });

  it("a refunds id taken first by a PLAIN start (keyless, plain JSON) does not block D's real refund", { timeout: 120_000 }, async () => {
    const payerD = await newPayer(world, tokens('100'));
    const d = await capturedIn(world, payerD, '1');
    const runId = await squat(d, [
      plainPayload({
        authorizationRunId: runIdOf(d),
        orderId: d.orderId,
        payer: payerD.address,
        merchant: world.merchant,
        amountCapturedMinor: '1000000',
        capturedAt: new Date().toISOString(),
        refundableUntil: new Date(Date.now() + 86_400_000).toISOString(),
        authorization: { id: d.id, orderId: d.orderId, state: 'captured', amount: '1', amountCaptured: '1', amountRefunded: '0' },
      }),
    ]);
    // The plain start is refused at once (as before issue 35): the id is left with a failed run.
    const outcome = await runOutcome(keyless, refundsIdOf(d), runId);
    expect(outcome.status).toBe('WORKFLOW_EXECUTION_STATUS_FAILED');

    const sinceD = await mark(world, payerD.address);
    const answer = await postRefund(world, d.id, { amount: '0.3', reason: 'the real refund' });
    expect(answer.status, `D's refund after a plain squatter: ${JSON.stringify(answer.body)}`).toBeOneOf([201, 202]);
    const settled = answer.body.state === 'pending' ? await settledRefund(world, answer.body.id) : answer.body;
    expect(settled.state, JSON.stringify(settled)).toBe('succeeded');
    await expectRefundBackedByChain(world, settled, payerD.address, "D's refund");
    await paid(sinceD, '0.3');
  });
});
