// The log watcher as a Temporal singleton: one workflow per network and task queue, its long-running
// activity on one worker, heartbeating its place in the chain; and a log's nudge reaches its workflow
// once, however many times it is delivered (a watcher that moved reads the last blocks again).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { keccak256, toHex } from 'viem';
import { parseResourceId } from '../../domain/ids.js';
import { chainWatcherWorkflowId, CHAIN_WATCHER_WORKFLOW_TYPE } from '../../domain/chainWatcher.js';
import { DEFAULT_TASK_QUEUE } from '../../runtime/temporal.js';
import { nudgeOnce, nudgeRequestId } from '../../worker/nudgeOnce.js';
import { ensureChainWatcher } from '../../runtime/chainWatchers.js';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
import { dev, payer } from '../support/api.js';
import { stored } from '../support/lifecycle.js';
import { connectTemporal } from '../support/temporal.js';

let temporal: Client;
beforeAll(async () => {
  temporal = await connectTemporal();
});
afterAll(async () => {
  await temporal?.connection.close();
});

const network = () => dev().networks[0]!.network;

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function nudgesIn(workflowId: string): Promise<number> {
  const history = await temporal.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'nonceActivity').length;
}

describe('the chain watcher', () => {
  it('is one workflow per network, running one watchChainLogs activity that heartbeats the block it has read', async () => {
    const running = async () => {
      const ids: string[] = [];
      for await (const w of temporal.workflow.list({ query: `WorkflowType = '${CHAIN_WATCHER_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'` }))
        ids.push(w.workflowId);
      return ids.filter((id) => id.startsWith(`chain-watcher/${DEFAULT_TASK_QUEUE}/`));
    };
    expect(await until(running, (ids) => ids.length > 0)).toEqual([chainWatcherWorkflowId(DEFAULT_TASK_QUEUE, network())]);
    const handle = temporal.workflow.getHandle(chainWatcherWorkflowId(DEFAULT_TASK_QUEUE, network()));
    const described = await until(
      () => handle.describe(),
      (d) => (d.raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.length ?? 0) > 0,
    );
    const pending = described.raw.pendingActivities ?? [];
    expect(pending).toHaveLength(1);
    expect(pending[0]!.activityType?.name).toBe('watchChainLogs');
    expect(pending[0]!.lastWorkerIdentity).toMatch(/\d+@/);
  });

  it('a watcher that ended is started again from the block its last run recorded; one that runs is left alone', async () => {
    // A task queue no worker polls: the runs stay as this test makes them.
    const queue = `watch-resume-${process.pid}-${Date.now()}`;
    const id = chainWatcherWorkflowId(queue, network());
    const first = await temporal.workflow.start(CHAIN_WATCHER_WORKFLOW_TYPE, {
      workflowId: id,
      taskQueue: queue,
      args: [{ network: network() }],
      memo: { watcher: { network: network(), lastBlock: '4242' } },
    });
    await ensureChainWatcher(temporal, queue, network());
    expect((await temporal.workflow.getHandle(id).describe()).runId).toBe(first.firstExecutionRunId);
    await first.terminate('an operator stops the watcher');
    await ensureChainWatcher(temporal, queue, network());
    const again = await temporal.workflow.getHandle(id).describe();
    expect(again.runId).not.toBe(first.firstExecutionRunId);
    const started = (await temporal.workflow.getHandle(id, again.runId).fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
    const input = await decodeFromPayloadsAtIndex(temporal.workflow.options.loadedDataConverter, 0, started?.input?.payloads ?? []);
    expect(input).toEqual({ network: network(), lastBlock: '4242' });
    await temporal.workflow.getHandle(id).terminate('test done');
  });

  it('a log delivered twice nudges its workflow once; another log nudges it again', async () => {
    const s = await stored(payer(11), '0.5');
    const { workflowId } = parseResourceId(s.id)!;
    const log = { transactionHash: keccak256(toHex(`watch-${s.id}`)), logIndex: 3, blockHash: keccak256(toHex(`block-${s.id}`)), removed: false };
    const nudge = { transactionHash: log.transactionHash, blockNumber: '1', removed: false };
    const before = await nudgesIn(workflowId);
    const id = nudgeRequestId(network(), log);
    await nudgeOnce(temporal, { workflowId }, nudge, id);
    await nudgeOnce(temporal, { workflowId }, nudge, id);
    // Signals that arrive while a workflow task runs reach history when it completes: read until settled.
    expect(
      await until(
        () => nudgesIn(workflowId),
        (n) => n >= before + 1,
      ),
    ).toBe(before + 1);
    // The same log removed by a reorg is news: its own nudge.
    await nudgeOnce(temporal, { workflowId }, { ...nudge, removed: true }, nudgeRequestId(network(), { ...log, removed: true }));
    expect(
      await until(
        () => nudgesIn(workflowId),
        (n) => n >= before + 2,
      ),
    ).toBe(before + 2);
    // Still the two: the repeated one was dropped by Temporal, not merely late.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await nudgesIn(workflowId)).toBe(before + 2);
    // Nudges change nothing by themselves: the workflow re-read the chain and is still stored.
    const state = await temporal.workflow.getHandle(workflowId).describe();
    expect(state.status.name).toBe('RUNNING');
  });
});
