// The refunds workflow with stub activities (test/support/stubChain.ts) on a dev server of its own:
// a ledger that rolls over (continue-as-new) carries its refunds, its totals and its events, so the
// sum of refunds still never passes what was captured; and a refund its validator refuses leaves no
// history.
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsFromMemo } from '../../../domain/events.js';
import { LEDGER_MEMO_KEY, refundMemoKey, refundsWorkflowId, type RefundLedgerSummary, type RefundRecord } from '../../../domain/refunds.js';
import type { RefundCommand, RefundsWorkflowInput } from '../../../workflows/refundMessages.js';
import { MERCHANT, stubChain } from '../../support/stubChain.js';
import { startWorkflowEnvironment, type WorkflowTestEnvironment } from '../../support/workflowEnvironment.js';

const EventType = proto.temporal.api.enums.v1.EventType;
const PAYER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

const chain = stubChain();
let env: WorkflowTestEnvironment;

beforeAll(async () => {
  env = await startWorkflowEnvironment(chain.activities);
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

/** A ledger of `capturedMinor`, started as the API starts one (fresh), with a short history limit. */
async function startLedger(capturedMinor: string, historyLimit?: number): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const authorizationRunId = randomUUID();
  const orderId = `wf-${authorizationRunId}`;
  const input: RefundsWorkflowInput = {
    authorizationRunId,
    orderId,
    payer: PAYER,
    merchant: MERCHANT,
    amountCapturedMinor: capturedMinor,
    captureTransactionHash: `0x${'ee'.repeat(32)}`,
    capturedAt: new Date().toISOString(),
    refundableUntil: new Date(Date.now() + 3_600_000).toISOString(),
    requestedAt: new Date().toISOString(),
    authorization: { id: 'auth_test', orderId, state: 'captured', amount: '0.00001', amountCaptured: '0.00001', amountRefunded: '0' },
    ...(historyLimit === undefined ? {} : { historyLimit }),
  };
  return env.client.workflow.start('refundsWorkflow', { taskQueue: env.taskQueue, workflowId: refundsWorkflowId(authorizationRunId), args: [input] });
}

const command = (amountMinor: string | null, key = randomUUID()): RefundCommand => ({
  amountMinor,
  reason: null,
  requestKey: key,
  requestFingerprint: `fp-${amountMinor}`,
});

/** The ledger as its latest run's memo shows it. */
async function ledgerOf(handle: WorkflowHandle) {
  const memo = (await env.client.workflow.getHandle(handle.workflowId).describe()).memo ?? {};
  const refunds = Object.entries(memo)
    .filter(([key]) => /^refund-\d{3,}$/.test(key))
    .map(([, record]) => record as RefundRecord)
    // A memo is a map: its keys come back in no promised order.
    .sort((a, b) => a.sequence - b.sequence);
  return { summary: memo[LEDGER_MEMO_KEY] as RefundLedgerSummary, refunds, events: eventsFromMemo(memo), memo };
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Asks for a refund and waits until it succeeded (the update answers as soon as it is recorded, pending). */
async function refund(handle: WorkflowHandle, amountMinor: string): Promise<RefundRecord> {
  const recorded = await env.client.workflow
    .getHandle(handle.workflowId)
    .executeUpdate<RefundRecord, [RefundCommand]>('refund', { args: [command(amountMinor)] });
  expect(recorded.stage).toBe('prechecking');
  const { memo } = await eventually(
    () => ledgerOf(handle),
    (l) => (l.memo[refundMemoKey(recorded.sequence)] as RefundRecord | undefined)?.stage === 'succeeded',
  );
  return memo[refundMemoKey(recorded.sequence)] as RefundRecord;
}

const refusedWith = (type: string) => ({ cause: { type } });

describe('the refunds workflow, with stub activities', () => {
  it('rolls over with its refunds, totals and events, and the next run still bounds refunds by what was captured', async () => {
    const handle = await startLedger('10', 20);
    const firstRunId = handle.firstExecutionRunId;
    for (let i = 0; i < 4; i += 1) await refund(handle, '1');
    const rolled = await eventually(
      () => env.client.workflow.getHandle(handle.workflowId).describe(),
      (d) => d.runId !== firstRunId,
    );
    expect(rolled.runId, 'the ledger rolled over').not.toBe(firstRunId);

    // The next run starts with every refund, the totals and the events.
    const carried = await ledgerOf(handle);
    expect(carried.summary).toMatchObject({ amountCapturedMinor: '10', amountRefundedMinor: '4', open: true });
    expect(carried.refunds.map((r) => [r.sequence, r.stage])).toEqual([
      [1, 'succeeded'],
      [2, 'succeeded'],
      [3, 'succeeded'],
      [4, 'succeeded'],
    ]);
    expect(carried.events.map((e) => e.id)).toEqual(carried.events.map((_, i) => `evt_${firstRunId}_${String(i + 1).padStart(4, '0')}`));
    expect(carried.events.filter((e) => e.type === 'refund.succeeded')).toHaveLength(4);

    // More than is left is refused by the new run as by the first; what is left is taken, numbered on.
    const latest = env.client.workflow.getHandle(handle.workflowId);
    await expect(latest.executeUpdate('refund', { args: [command('7')] })).rejects.toMatchObject(refusedWith('refund_exceeds_captured'));
    const fifth = await refund(handle, '6');
    expect(fifth.sequence).toBe(5);
    const closed = await eventually(
      () => ledgerOf(handle),
      (l) => l.summary.amountRefundedMinor === '10',
    );
    expect(closed.events.at(-1)).toMatchObject({ type: 'refund.succeeded', id: `evt_${firstRunId}_0010` });
    // Everything captured is refunded: the ledger closes, and refuses any more.
    await eventually(
      () => env.client.workflow.getHandle(handle.workflowId).describe(),
      (d) => d.status.name === 'COMPLETED',
    );
    expect((await ledgerOf(handle)).summary.open).toBe(false);
  });

  it('leaves no trace in history of a refund its validator refuses', async () => {
    const handle = await startLedger('5');
    await refund(handle, '2');
    const length = async () => (await handle.fetchHistory()).events?.length ?? 0;
    const before = await eventually(
      async () => [await length(), await length()] as const,
      ([a, b]) => a === b,
    );
    await expect(handle.executeUpdate('refund', { args: [command('4')] })).rejects.toMatchObject(refusedWith('refund_exceeds_captured'));
    await expect(handle.executeUpdate('refund', { args: [command('0')] })).rejects.toMatchObject(refusedWith('validation_error'));
    await expect(handle.executeUpdate('refund', { args: [{ ...command('1'), requestKey: '' }] })).rejects.toMatchObject(refusedWith('validation_error'));
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.length).toBe(before[0]);
    expect(events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)).toHaveLength(1);
    expect((await ledgerOf(handle)).summary).toMatchObject({ amountRefundedMinor: '2', open: true });
  });
});
