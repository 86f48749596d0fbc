// The events feed when a visibility call misses its deadline: a server that still answers a cheap
// call is busy (429 rate_limited, retry in a second), only one that answers nothing is down (503).
// CI once saw one 503 among 100 parallel feed reads while Temporal was up and only slow.
import { describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { list as listEvents } from '../../../client/events/list.js';
import { TemporalTransport } from '../../../client/transport/temporalTransport.js';

const deadline = () => Promise.reject(Object.assign(new Error('4 DEADLINE_EXCEEDED'), { code: 4 }));

function temporalWith(systemInfo: () => Promise<unknown>): { client: Client; calls: string[] } {
  const calls: string[] = [];
  const called =
    <T>(name: string, answer: () => Promise<T>) =>
    () => {
      calls.push(name);
      return answer();
    };
  const client = {
    options: { namespace: 'default' },
    connection: { withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn() },
    workflow: { options: { loadedDataConverter: {} } },
    workflowService: {
      countWorkflowExecutions: called('count', deadline),
      listWorkflowExecutions: called('list', deadline),
      getSystemInfo: called('systemInfo', systemInfo),
    },
  } as unknown as Client;
  return { client, calls };
}

describe('a feed scan whose visibility call times out', () => {
  it('is rate_limited with Retry-After when the server still answers', async () => {
    const { client, calls } = temporalWith(() => Promise.resolve({}));
    const refused = await listEvents(new TemporalTransport(client, 'authcap'), { limit: 3 }).catch((err) => err);
    expect(refused.code).toBe('rate_limited');
    expect(refused.details.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(calls).toContain('systemInfo');
  });

  it('is temporal_unavailable when the server answers nothing', async () => {
    const { client, calls } = temporalWith(deadline);
    const refused = await listEvents(new TemporalTransport(client, 'authcap'), { limit: 4 }).catch((err) => err);
    expect(refused.code).toBe('temporal_unavailable');
    expect(calls).toContain('systemInfo');
  });
});
