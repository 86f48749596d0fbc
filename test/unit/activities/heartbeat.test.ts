// A bare heartbeat (a wait saying it is alive) keeps the attempt's progress: Temporal keeps only the
// latest heartbeat's details, and a retry resumes from them (a follower that forgot where to look
// would miss an event older than its look-back and wait out its whole timeout).
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { heartbeat } from '../../../activities/heartbeat.js';

describe('heartbeat', () => {
  it('sends the last details again when a wait heartbeats with none', async () => {
    const env = new MockActivityEnvironment();
    const sent: unknown[] = [];
    env.on('heartbeat', (details: unknown) => sent.push(details));
    await env.run(async () => {
      heartbeat({ fromBlock: '7' });
      heartbeat();
      heartbeat({ fromBlock: '7', seen: '0xab' });
      heartbeat();
    });
    expect(sent).toEqual([{ fromBlock: '7' }, { fromBlock: '7' }, { fromBlock: '7', seen: '0xab' }, { fromBlock: '7', seen: '0xab' }]);
  });

  it('sends what the attempt started with until it has details of its own', async () => {
    const env = new MockActivityEnvironment({ heartbeatDetails: { fromBlock: '3' } });
    const sent: unknown[] = [];
    env.on('heartbeat', (details: unknown) => sent.push(details));
    await env.run(async () => heartbeat());
    expect(sent).toEqual([{ fromBlock: '3' }]);
  });
});
