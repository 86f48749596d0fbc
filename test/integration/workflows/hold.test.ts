// A held payment through the authorization workflow, with stub activities (test/support/stubHold.ts):
// signed → held → captured in parts → the rest voided; a part over what is capturable refused with no
// trace; the same Idempotency-Key answered with the part it made.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizationView, AuthorizationWorkflowInput } from '../../../domain/authorization.js';
import { VIEW_MEMO_KEY } from '../../../domain/authorization.js';
import { workflowIdForOrder } from '../../../domain/ids.js';
import { SIGNATURE } from '../../support/stubChain.js';
import { stubHoldChain } from '../../support/stubHold.js';
import { startWorkflowEnvironment, type WorkflowTestEnvironment } from '../../support/workflowEnvironment.js';

const PAYER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const chain = stubHoldChain();
let env: WorkflowTestEnvironment;

beforeAll(async () => {
  env = await startWorkflowEnvironment(chain.activities);
}, 120_000);
afterAll(async () => {
  await env?.teardown();
});

async function heldFor(value: string, policyOverrides: { historyLimit?: number } = {}) {
  const orderId = `hold-${randomUUID()}`;
  const input: AuthorizationWorkflowInput = { orderId, requestedAt: new Date().toISOString(), draft: { payer: PAYER, value, hold: true }, policyOverrides };
  const handle = await env.client.workflow.start('authorizationWorkflow', { taskQueue: env.taskQueue, workflowId: workflowIdForOrder(orderId), args: [input] });
  await handle.executeUpdate('draftReady');
  await handle.executeUpdate('submitSignature', { args: [{ signature: SIGNATURE }] });
  return handle;
}

const viewOf = async (handle: Awaited<ReturnType<typeof heldFor>>) =>
  ((await env.client.workflow.getHandle(handle.workflowId).describe()).memo ?? {})[VIEW_MEMO_KEY] as AuthorizationView;

async function until(read: () => Promise<AuthorizationView>, done: (v: AuthorizationView) => boolean) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const view = await read();
    if (done(view) || Date.now() > deadline) return view;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const capture = (handle: Awaited<ReturnType<typeof heldFor>>, body: { amount?: string; final?: boolean; requestKey: string }) =>
  handle.executeUpdate<AuthorizationView, [unknown]>('capture', { args: [{ ...body, requestFingerprint: JSON.stringify(body) }] });

describe('a held payment, with stub activities', () => {
  it('is held once signed, captured in parts, and the rest voided: captured, each part once', async () => {
    const handle = await heldFor('10000000');
    const held = await until(
      () => viewOf(handle),
      (v) => v.state === 'held',
    );
    expect(held.state).toBe('held');
    await capture(handle, { amount: '3000000', requestKey: 'one' });
    await capture(handle, { amount: '2500000', requestKey: 'two' });
    // Over what is left: refused before history.
    await expect(capture(handle, { amount: '4500001', requestKey: 'three' })).rejects.toMatchObject({ cause: { type: 'amount_exceeds_capturable' } });
    // The same key again: the part it made, nothing new.
    await expect(capture(handle, { amount: '3000000', requestKey: 'one' })).rejects.toMatchObject({ cause: { type: 'capture_already_requested' } });
    await handle.executeUpdate('void', { args: [{ reason: 'shipped short' }] });
    const done = await until(
      () => viewOf(handle),
      (v) => v.state === 'captured',
    );
    expect(done.state).toBe('captured');
    const calls = chain.escrowCalls.filter(
      (c) => c.call.paymentInfo.salt === chain.escrowCalls.find((x) => x.requestId.includes(handle.workflowId))?.call.paymentInfo.salt,
    );
    expect(calls.map((c) => [c.call.action, c.call.amount ?? c.call.expect?.capturable])).toEqual([
      ['authorize', '10000000'],
      ['capture', '3000000'],
      ['capture', '2500000'],
      ['void', '4500000'],
    ]);
    // Each part went out expecting what the one before left.
    expect(calls.slice(1, 3).map((c) => c.call.expect?.capturable)).toEqual(['10000000', '7000000']);
  });

  it('rolls over between parts with its hold, and the next run keeps every part and every key', async () => {
    const handle = await heldFor('10000000', { historyLimit: 30 });
    const firstRunId = handle.firstExecutionRunId;
    await until(
      () => viewOf(handle),
      (v) => v.state === 'held',
    );
    const latest = () => env.client.workflow.getHandle(handle.workflowId);
    const part = (n: number) =>
      latest().executeUpdate<AuthorizationView, [unknown]>('capture', {
        args: [{ amount: '1000000', requestKey: `k${n}`, requestFingerprint: `f${n}` }],
      });
    for (let n = 1; n <= 4; n += 1) await part(n);
    const rolled = await until(
      () => viewOf(handle),
      () => true,
    );
    const description = await latest().describe();
    expect(description.runId).not.toBe(firstRunId);
    expect(rolled.state).toBe('held');
    expect(rolled.captures?.map((c) => [c.amount, c.status])).toEqual([
      ['1', 'succeeded'],
      ['1', 'succeeded'],
      ['1', 'succeeded'],
      ['1', 'succeeded'],
    ]);
    expect(rolled.amountCapturable).toBe('6');
    // A key from before the roll-over is still that part.
    await expect(latest().executeUpdate('capture', { args: [{ amount: '1000000', requestKey: 'k1', requestFingerprint: 'f1' }] })).rejects.toMatchObject({
      cause: { type: 'capture_already_requested' },
    });
    await latest().executeUpdate('void', { args: [{ reason: 'done' }] });
    const done = await until(
      () => viewOf(handle),
      (v) => v.state === 'captured',
    );
    expect(done.amountCaptured).toBe('4');
    expect(done.hold?.release).toMatchObject({ kind: 'void', amount: '6' });
  });
});
