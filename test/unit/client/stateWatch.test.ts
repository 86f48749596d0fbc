// What a watch learns from Temporal's history long poll (client/transport/historyLongPoll.ts), against scripted
// answers of GetWorkflowExecutionHistory: each call resumes from the last page token, the memo is
// worth reading only after events that can change it, continue-as-new is followed to the next run,
// and a run closed for good (or a later attempt in the workflow id's place) ends the watch.
import { describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { historyChanges } from '../../../client/transport/historyLongPoll.js';
import { resourceId } from '../../../domain/ids.js';

const FIRST_RUN = '0190f0a0-0000-7000-8000-000000000001';
const ID = resourceId('order-1', FIRST_RUN);

interface Answer {
  events: { eventType: number; workflowExecutionStartedEventAttributes?: { firstExecutionRunId: string } }[];
  token?: string;
}

const started = (firstExecutionRunId = FIRST_RUN) => ({ eventType: 1, workflowExecutionStartedEventAttributes: { firstExecutionRunId } });
const event = (eventType: number) => ({ eventType });
// Workflow task scheduled, started, completed: the workflow ran, its memo unchanged.
const TASK = [event(5), event(6), event(7)];
const MEMO_WRITTEN = event(46);
const CONTINUED_AS_NEW = event(28);
const TERMINATED = event(27);

/** A Temporal whose history long poll gives these answers in turn, and the requests it got. */
function temporalAnswering(answers: Answer[]) {
  const requests: { workflowId: string; runId?: string; token?: string; waitNewEvent: boolean }[] = [];
  const temporal = {
    options: { namespace: 'default' },
    connection: {
      withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn(),
      withAbortSignal: <T>(_signal: AbortSignal, fn: () => Promise<T>) => fn(),
    },
    workflowService: {
      async getWorkflowExecutionHistory(request: { execution: { workflowId: string; runId?: string }; nextPageToken?: Uint8Array; waitNewEvent: boolean }) {
        requests.push({
          workflowId: request.execution.workflowId,
          runId: request.execution.runId,
          token: request.nextPageToken ? Buffer.from(request.nextPageToken).toString() : undefined,
          waitNewEvent: request.waitNewEvent,
        });
        const answer = answers.shift();
        if (!answer) throw new Error('no more answers scripted');
        return { history: { events: answer.events }, nextPageToken: answer.token ? Buffer.from(answer.token) : new Uint8Array() };
      },
    },
  } as unknown as Client;
  return { temporal, requests };
}

async function collect(temporal: Client, limit = 20): Promise<string[]> {
  const seen: string[] = [];
  for await (const change of historyChanges(temporal, ID, new AbortController().signal)) {
    seen.push(change);
    if (seen.length >= limit) break;
  }
  return seen;
}

describe('historyChanges', () => {
  it('reads the memo again only after events that can change it, each poll resuming from the last token', async () => {
    const { temporal, requests } = temporalAnswering([
      { events: [started(), ...TASK, MEMO_WRITTEN], token: 't1' },
      { events: [], token: 't1' },
      { events: TASK, token: 't2' },
      { events: [...TASK, MEMO_WRITTEN], token: 't3' },
      { events: [...TASK, MEMO_WRITTEN, event(2)] },
    ]);
    // The first answer may hold events newer than the first read; then quiet, workflow tasks, a memo write, the close.
    expect(await collect(temporal)).toEqual(['changed', 'quiet', 'quiet', 'changed', 'changed']);
    expect(requests.map((r) => r.token)).toEqual([undefined, 't1', 't1', 't2', 't3']);
    expect(requests.every((r) => r.waitNewEvent && r.workflowId === 'authorization-order-1' && r.runId === undefined)).toBe(true);
  });

  it('follows continue-as-new to the next run of the attempt, then ends when the attempt closes', async () => {
    const { temporal, requests } = temporalAnswering([
      { events: [started(), ...TASK], token: 't1' },
      { events: [...TASK, CONTINUED_AS_NEW] },
      // The workflow id's current run is now the next run: its whole history so far.
      { events: [started(), ...TASK, MEMO_WRITTEN], token: 'n1' },
      { events: [...TASK, TERMINATED] },
    ]);
    expect(await collect(temporal)).toEqual(['changed', 'changed', 'changed', 'changed']);
    expect(requests.map((r) => r.token)).toEqual([undefined, 't1', undefined, 'n1']);
  });

  it('a run already closed for good is read once and ends the watch', async () => {
    const { temporal, requests } = temporalAnswering([{ events: [started(), ...TASK, MEMO_WRITTEN, TERMINATED] }]);
    expect(await collect(temporal)).toEqual(['changed']);
    expect(requests).toHaveLength(1);
  });

  it('a later attempt of the same order in the workflow id: this attempt will not change again', async () => {
    const { temporal } = temporalAnswering([{ events: [started('0190f0a0-0000-7000-8000-0000000000ff'), ...TASK], token: 'x' }]);
    expect(await collect(temporal)).toEqual([]);
  });

  it('a page of a long history carries a token without waiting; the pages that follow are resumed from it', async () => {
    const { temporal, requests } = temporalAnswering([
      { events: [started(), ...TASK], token: 'page2' },
      { events: [...TASK, MEMO_WRITTEN], token: 'tail' },
      { events: [...TASK, event(2)] },
    ]);
    expect(await collect(temporal)).toEqual(['changed', 'changed', 'changed']);
    expect(requests.map((r) => r.token)).toEqual([undefined, 'page2', 'tail']);
  });

  it('an id that is not an authorization is not found, before any call', async () => {
    const { temporal, requests } = temporalAnswering([]);
    const changes = historyChanges(temporal, 'auth_nope', new AbortController().signal);
    await expect(changes.next()).rejects.toMatchObject({ code: 'not_found' });
    expect(requests).toHaveLength(0);
  });
});
