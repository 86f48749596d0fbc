// The authorization workflow with stub activities (test/support/stubChain.ts) on a dev server of its
// own: what the integration suite cannot reach cheaply. A roll-over that carries the state and the
// events into the next run, the deadline, a partial capture's release, and refused commands that
// leave no history.
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizationView, AuthorizationWorkflowInput } from '../../../domain/authorization.js';
import { VIEW_MEMO_KEY } from '../../../domain/authorization.js';
import { eventsFromMemo } from '../../../domain/events.js';
import { workflowIdForOrder } from '../../../domain/ids.js';
import { RELEASE_MEMO_KEY, type RefundRecord } from '../../../domain/refunds.js';
import { MERCHANT, SIGNATURE, stubChain } from '../../support/stubChain.js';
import { startWorkflowEnvironment, type WorkflowTestEnvironment } from '../../support/workflowEnvironment.js';

const EventType = proto.temporal.api.enums.v1.EventType;
const PAYER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const VALUE = '1000000';

const chain = stubChain();
let env: WorkflowTestEnvironment;

beforeAll(async () => {
  env = await startWorkflowEnvironment(chain.activities);
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

/** A fresh draft, as the API starts one (stamped now), with the test's knobs over the worker's policy. */
async function startDraft(draft: { validForSeconds?: number } = {}, policyOverrides: { historyLimit?: number; reconcileIntervalSeconds?: number } = {}) {
  const orderId = `wf-${randomUUID()}`;
  const input: AuthorizationWorkflowInput = {
    orderId,
    requestedAt: new Date().toISOString(),
    draft: { payer: PAYER, value: VALUE, ...draft },
    policyOverrides,
  };
  const handle = await env.client.workflow.start('authorizationWorkflow', { taskQueue: env.taskQueue, workflowId: workflowIdForOrder(orderId), args: [input] });
  // Answered once the draft exists, as the API's create is.
  await handle.executeUpdate('draftReady');
  return { orderId, handle };
}

/** The memo of the attempt's latest run: the view, the release, the events. */
async function memoOf(handle: WorkflowHandle) {
  const memo = (await env.client.workflow.getHandle(handle.workflowId).describe()).memo ?? {};
  return { view: memo[VIEW_MEMO_KEY] as AuthorizationView, release: memo[RELEASE_MEMO_KEY] as RefundRecord | undefined, events: eventsFromMemo(memo) };
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const refusedWith = (type: string) => ({ cause: { type } });

describe('the authorization workflow, with stub activities', () => {
  it('rolls over (continue-as-new) with its state and its events, and the next run goes on from there', async () => {
    // A periodic read every second and a short history limit: it rolls over within seconds while it waits.
    const { handle } = await startDraft({}, { reconcileIntervalSeconds: 1, historyLimit: 25 });
    const firstRunId = handle.firstExecutionRunId;
    const rolled = await eventually(
      () => env.client.workflow.getHandle(handle.workflowId).describe(),
      (d) => d.runId !== firstRunId,
    );
    expect(rolled.runId).not.toBe(firstRunId);
    expect(rolled.raw.workflowExecutionInfo?.firstRunId).toBe(firstRunId);
    expect((await env.client.workflow.getHandle(handle.workflowId, firstRunId).describe()).status.name).toBe('CONTINUED_AS_NEW');

    // The next run starts with the previous run's memo: the view and the events are there at once.
    const carried = await memoOf(handle);
    expect(carried.view.state).toBe('drafted');
    expect(carried.view.history.map((h) => h.event)).toEqual(['REQUESTED', 'DRAFTED']);
    expect(carried.events.map((e) => [e.type, e.id])).toEqual([['authorization.drafted', `evt_${firstRunId}_0001`]]);

    // And goes on: the signature is taken by the new run, and its event numbered after the carried one.
    const latest = env.client.workflow.getHandle(handle.workflowId);
    const stored = await latest.executeUpdate<AuthorizationView, [{ signature: string }]>('submitSignature', { args: [{ signature: SIGNATURE }] });
    expect(stored.state).toBe('stored');
    const after = await memoOf(handle);
    expect(after.events.map((e) => [e.type, e.id])).toEqual([
      ['authorization.drafted', `evt_${firstRunId}_0001`],
      ['authorization.stored', `evt_${firstRunId}_0002`],
    ]);
    await latest.executeUpdate('void', { args: [{ reason: 'test done' }] });
  });

  it('expires at its deadline when the nonce is still unused, and ends', async () => {
    const { handle } = await startDraft({ validForSeconds: 3 });
    const ended = await env.client.workflow.getHandle(handle.workflowId).result();
    expect((ended as AuthorizationView).state).toBe('expired');
    const { events } = await memoOf(handle);
    expect(events.map((e) => e.type)).toEqual(['authorization.drafted', 'authorization.expired']);
  });

  it('gives a partial capture’s difference back to the payer before it counts as captured', async () => {
    const { handle } = await startDraft();
    await handle.executeUpdate('submitSignature', { args: [{ signature: SIGNATURE }] });
    const captured = await handle.executeUpdate<AuthorizationView, [{ amount: string }]>('capture', { args: [{ amount: '400000' }] });
    expect(captured.state).toBe('captured');
    expect(captured.amountCaptured).toBe('0.4');

    const { release, events, view } = await memoOf(handle);
    expect(release).toMatchObject({ sequence: 0, stage: 'succeeded', amountMinor: '600000', payer: PAYER, merchant: MERCHANT });
    expect(view.history.at(-1)?.reason).toMatch(/^partial capture: kept 0\.4, returned 0\.6 to the payer$/);
    // The release is announced as a refund, before the capture it completes.
    expect(events.map((e) => e.type)).toEqual([
      'authorization.drafted',
      'authorization.stored',
      'authorization.preconfirmed',
      'refund.created',
      'refund.succeeded',
      'authorization.captured',
    ]);
    // One follower for the capture, one for the release (from the merchant key back to the payer).
    const nonces = [captured.authorization!.nonce, release!.nonce];
    const mine = chain.followed.filter((f) => nonces.includes(f.call.authorization.nonce));
    expect(mine.map((f) => [f.call.kind, f.call.authorization.value])).toEqual([
      ['capture', VALUE],
      ['refund', '600000'],
    ]);
  });

  it('leaves no trace in history of a command its validators refuse', async () => {
    const { handle } = await startDraft();
    const length = async () => (await handle.fetchHistory()).events?.length ?? 0;
    const before = await length();
    // Not signed yet: no capture, no cancellation; a void needs a reason; a signature must be hex.
    await expect(handle.executeUpdate('capture', { args: [{}] })).rejects.toMatchObject(refusedWith('invalid_state'));
    await expect(handle.executeUpdate('cancel', { args: [{ signature: SIGNATURE }] })).rejects.toMatchObject(refusedWith('invalid_state'));
    await expect(handle.executeUpdate('void', { args: [{ reason: ' ' }] })).rejects.toMatchObject(refusedWith('validation_error'));
    await expect(handle.executeUpdate('submitSignature', { args: [{ signature: 'not hex' }] })).rejects.toMatchObject(refusedWith('validation_error'));
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.length).toBe(before);
    expect(events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)).toHaveLength(1); // draftReady
    // The authorization is as it was: still drafted, nothing recorded against it.
    const { view } = await memoOf(handle);
    expect(view.state).toBe('drafted');
    expect(view.lastError).toBeNull();
    await handle.executeUpdate('void', { args: [{ reason: 'test done' }] });
  });
});
