// Issue 35, findings 4 and 9, as the outside probe ran them: a Temporal client WITHOUT the payload
// codec key reads the merchant relayer's history, terminates the relayer (which forgets what it
// answered), starts it again with its own sealed start input copied from that history, and sends back
// every sealed `relayRequest` signal it copied. Payload binding cannot refuse these (same workflow id,
// same messages): the relayer itself must. Nothing may be broadcast (the merchant's `pending`
// transaction count stays put), no payer is charged again, and a new capture still goes through.
//
// On a chain, worker and API of this file's own (its merchant key and relayer are its alone), so the
// merchant's transaction count is exact and terminating the relayer disturbs no other test file.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { relayerWorkflowId } from '../../domain/relay.js';
import { connectTemporalWithoutKeys } from '../support/temporal.js';
import { rawHistory } from '../support/copiedPayloads.js';
import type { temporal } from '@temporalio/proto';
import { sleep } from '../support/lifecycle.js';
import { balanceAt, capturedIn, newPayer, startIsolatedWorld, tokens, type IsolatedWorld } from '../support/refunds.js';
import type { DemoKey } from '../support/lifecycle.js';

let world: IsolatedWorld;
let keyless: Client;

beforeAll(async () => {
  world = await startIsolatedWorld('relay-replay');
  keyless = await connectTemporalWithoutKeys();
}, 180_000);

afterAll(async () => {
  await keyless?.connection.close();
  await world?.stop();
});

const pendingCount = () => world.publicClient.getTransactionCount({ address: world.merchant, blockTag: 'pending' });

describe('a relayer terminated and started again by a client without the codec key', () => {
  it('broadcasts nothing for its copied start input and copied relay requests; a new capture still works', async () => {
    // History: a few captures through the API, each a sealed relayRequest signal to the relayer.
    const payers: DemoKey[] = [];
    for (let i = 0; i < 3; i += 1) {
      const p = await newPayer(world, tokens('10'));
      payers.push(p);
      const captured = await capturedIn(world, p, '1');
      expect(captured.state).toBe('captured');
    }
    const workflowId = relayerWorkflowId(world.merchant, world.chain.network);

    // What the probe read: the start event and every relayRequest signal, payloads, headers and all.
    const history = await rawHistory(keyless, workflowId);
    const started = history[0]?.workflowExecutionStartedEventAttributes;
    expect(started?.workflowType?.name).toBe('merchantRelayerWorkflow');
    const signals = history
      .map((e) => e.workflowExecutionSignaledEventAttributes)
      .filter((s): s is temporal.api.history.v1.IWorkflowExecutionSignaledEventAttributes => s?.signalName === 'relayRequest');
    expect(signals.length).toBeGreaterThanOrEqual(payers.length);
    // Sealed: the keyless client sees no request in the clear.
    for (const s of signals) expect(new TextDecoder().decode(s.input?.payloads?.[0]?.data ?? new Uint8Array())).not.toContain('requestId');

    // Wait for every capture to be mined, then mark the chain.
    for (let i = 0; i < 50 && (await pendingCount()) !== (await world.publicClient.getTransactionCount({ address: world.merchant })); i += 1) await sleep(200);
    const before = await pendingCount();
    const balances = await Promise.all(payers.map((p) => balanceAt(world, p.address)));
    const merchantBalance = await balanceAt(world, world.merchant);

    // Terminate: the relayer's memory of its answers goes with it.
    await keyless.workflowService.terminateWorkflowExecution({
      namespace: keyless.options.namespace,
      workflowExecution: { workflowId },
      reason: 'outside probe',
      identity: 'relay-replay-test',
    });
    // Start again, with the copied sealed start input, on the copied task queue.
    await keyless.workflowService.startWorkflowExecution({
      namespace: keyless.options.namespace,
      workflowId,
      workflowType: started!.workflowType,
      taskQueue: started!.taskQueue,
      input: started!.input,
      ...(started!.header ? { header: started!.header } : {}),
      ...(started!.memo ? { memo: started!.memo } : {}),
      requestId: randomUUID(),
      identity: 'relay-replay-test',
    });
    // And every copied relayRequest, as it was sent.
    for (const s of signals) {
      await keyless.workflowService.signalWorkflowExecution({
        namespace: keyless.options.namespace,
        workflowExecution: { workflowId },
        signalName: 'relayRequest',
        input: s.input,
        ...(s.header ? { header: s.header } : {}),
        identity: 'relay-replay-test',
      });
    }

    // The restarted relayer handled them all: a broadcast batch scheduled after the last signal
    // (the one that looked at them) completed.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const events = await rawHistory(keyless, workflowId);
      const lastSignal = events.map((e) => e.workflowExecutionSignaledEventAttributes?.signalName).lastIndexOf('relayRequest');
      const batches = new Set(
        events
          .slice(lastSignal + 1)
          .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'broadcastBatch')
          .map((e) => String(e.eventId)),
      );
      const handled = events.some((e) => batches.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)));
      if (lastSignal >= 0 && handled) break;
      if (Date.now() > deadline) throw new Error('the restarted relayer did not handle the copied requests in 30 s');
      await sleep(250);
    }
    // Time for anything broadcast to show in the pending count and to be mined (0.2 s blocks).
    await sleep(3_000);

    expect(await pendingCount(), "the merchant's pending transaction count after the replay").toBe(before);
    expect(await Promise.all(payers.map((p) => balanceAt(world, p.address))), 'the payers were not charged again').toEqual(balances);
    expect(await balanceAt(world, world.merchant)).toBe(merchantBalance);

    // The relayer the probe started is the one the merchant has now: a new capture goes through it.
    const fresh = await newPayer(world, tokens('10'));
    const captured = await capturedIn(world, fresh, '2');
    expect(captured.state).toBe('captured');
    expect(await pendingCount()).toBe(before + 1);
    expect(await balanceAt(world, fresh.address)).toBe(tokens('8'));
  }, 180_000);
});
