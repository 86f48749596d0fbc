// Issue 35, across runs: the codec binds a payload to its workflow id and activity id, and Temporal's
// serialization context names no run. So a payload sealed in one run of an id would open in another
// run of the same id: a start input copied out of a terminated run's history (started again under
// the same id), or an activity's result answered by a rogue worker into a later run (a continue-as-new
// or a restart numbers its activities from 1 again). Each run's activity ids name the run, and a run
// refuses a start input the API did not just send.
//
// The attacker is `keyless`: a Temporal client without the codec key, with raw workflowService calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { connectTemporal, connectTemporalWithoutKeys } from '../support/temporal.js';
import { sleep } from '../support/lifecycle.js';
import { balanceAt, call, captureIn, getAuthorizationIn, newPayer, sharedWorld, storedIn, tokens, type World } from '../support/refunds.js';
import { plainPayload } from '../support/forgedInputs.js';
import { ACTED, copiedStartInput, rawHistory, runOutcome, startWithPayloads, terminateRun } from '../support/copiedPayloads.js';
import { START_SLACK_MS } from '../../workflows/freshStart.js';

const EventType = temporal.api.enums.v1.EventType;

let keyless: Client;
let operator: Client;
let world: World;
const restarted: { workflowId: string; runId: string }[] = [];

beforeAll(async () => {
  keyless = await connectTemporalWithoutKeys();
  operator = await connectTemporal();
  world = sharedWorld();
});
afterAll(async () => {
  for (const r of restarted) await terminateRun(operator, r.workflowId, r.runId, 'copiedPayloads.restart test: its restarted run');
  await keyless?.connection.close();
  await operator?.connection.close();
});

const workflowIdOf = (resource: { orderId: string }) => `authorization-${resource.orderId}`;
const runIdOf = (resource: { id: string }) => resource.id.split('.').pop()!;

describe('payloads of one run do not act in another run of the same workflow id', () => {
  it("names the run in every activity's id, so a result sealed in one run does not open in the next", async () => {
    const p = await newPayer(world, tokens('10'));
    const stored = await storedIn(world, p, '1.00');
    const { final } = await captureIn(world, stored.id);
    const runId = runIdOf(final);
    const scheduled = (await rawHistory(keyless, workflowIdOf(final), runId))
      .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
      .map((e) => e.activityTaskScheduledEventAttributes?.activityId ?? '');
    // The capture ran at least one activity on the follow queue (submitting, following the chain).
    expect(scheduled.length).toBeGreaterThan(0);
    for (const id of scheduled) expect(id).toMatch(new RegExp(`^\\d+@${runId}$`));
  });

  it('refuses a terminated authorization started again with its own copied start input: no activity, no capture, the chain untouched', async () => {
    const p = await newPayer(world, tokens('10'));
    const stored = await storedIn(world, p, '2.00');
    const workflowId = workflowIdOf(stored);
    const input = await copiedStartInput(keyless, workflowId, runIdOf(stored));
    // Terminate (a namespace member with that right), then wait out the start's slack: a copy is
    // a start the API asked for long ago.
    await terminateRun(operator, workflowId, runIdOf(stored), 'copiedPayloads.restart test: the run a copy will restart');
    await sleep(START_SLACK_MS + 2_000);
    const balanceBefore = await balanceAt(world, p.address);
    const runId = await startWithPayloads(keyless, { workflowId, workflowType: 'authorizationWorkflow', taskQueue: 'authcap', input });
    restarted.push({ workflowId, runId });
    const outcome = await runOutcome(keyless, workflowId, runId);
    expect(outcome.status).toBe('WORKFLOW_EXECUTION_STATUS_FAILED');
    expect(outcome.failureType).toBe('unauthenticated_input');
    expect(outcome.eventTypes.filter((t) => ACTED.test(t))).toEqual([]);
    // Nothing was captured by the restarted run: the payer is not charged.
    await sleep(2_000);
    expect((await getAuthorizationIn(world, stored.id)).state).not.toBe('captured');
    expect(await balanceAt(world, p.address)).toBe(balanceBefore);
  }, 120_000);

  it("keeps an order one charge when a run nobody sealed follows its capture: the merchant's next attempt is refused order_already_captured", async () => {
    const p = await newPayer(world, tokens('10'));
    const stored = await storedIn(world, p, '1.50');
    await captureIn(world, stored.id);
    const workflowId = workflowIdOf(stored);
    // The id's latest run becomes one that failed at its first task (a start nobody sealed): it has
    // no view of its own, and the captured attempt is no longer the latest.
    const runId = await startWithPayloads(keyless, {
      workflowId,
      workflowType: 'authorizationWorkflow',
      taskQueue: 'authcap',
      input: [plainPayload({ orderId: stored.orderId })],
    });
    restarted.push({ workflowId, runId });
    expect((await runOutcome(keyless, workflowId, runId)).status).toBe('WORKFLOW_EXECUTION_STATUS_FAILED');
    const again = await call(world, 'POST', '/v1/authorizations', { orderId: stored.orderId, payer: p.address, amount: '1.50' });
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body.error.code).toBe('order_already_captured');
  });
});
