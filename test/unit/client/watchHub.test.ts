// The watch hub (client/authorizations/watchHub.ts) with a fake Temporal: every wait on one authorization shares one
// watch, the watch stops when its last wait leaves, one change wakes every wait, and reads the hub
// makes on the waits' behalf never turn into errors for them while Temporal answers at all.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AuthorizationResource } from '../../../domain/authorization.js';
import { AuthcapError } from '../../../domain/errors.js';
import { type RecordChange, WatchHub, type WatchSource } from '../../../client/authorizations/watchHub.js';

const ID = 'auth_b3JkZXI.0190f0a0-0000-7000-8000-000000000001';

/** Temporal as the hub sees it: a memo to read and a long poll per watch, both scripted by the test. */
class FakeTemporal implements WatchSource {
  state = 'drafted';
  reads = 0;
  /** Reads to fail before the next one answers, and with what. */
  failReads: Error[] = [];
  longPollsStarted = 0;
  longPollsOpen = 0;
  private readonly polls = new Set<(change: RecordChange | Error) => void>();

  async read(id: string): Promise<AuthorizationResource> {
    this.reads += 1;
    const failure = this.failReads.shift();
    if (failure) throw failure;
    return { id, state: this.state } as AuthorizationResource;
  }

  async *changes(_id: string, signal: AbortSignal): AsyncGenerator<RecordChange> {
    this.longPollsStarted += 1;
    this.longPollsOpen += 1;
    try {
      while (!signal.aborted) {
        const next = await new Promise<RecordChange | Error>((resolve) => {
          // The real long poll rejects as CANCELLED when its signal aborts.
          const cancel = () => deliver(new Error('CANCELLED'));
          const deliver = (change: RecordChange | Error) => {
            this.polls.delete(deliver);
            signal.removeEventListener('abort', cancel);
            resolve(change);
          };
          this.polls.add(deliver);
          signal.addEventListener('abort', cancel, { once: true });
        });
        if (next instanceof Error) throw next;
        yield next;
      }
    } finally {
      this.longPollsOpen -= 1;
    }
  }

  /** The workflow wrote an event that changed its memo. */
  change(state: string): void {
    this.state = state;
    this.deliver('changed');
  }

  /** The open long polls fail (the server went away) or answer. */
  deliver(change: RecordChange | Error): void {
    for (const poll of [...this.polls]) poll(change);
  }
}

const unavailable = () => new AuthcapError('temporal_unavailable', 'Temporal is not reachable right now; retry shortly');

describe('WatchHub', () => {
  let temporal: FakeTemporal;
  let hub: WatchHub;

  beforeEach(() => {
    vi.useFakeTimers();
    temporal = new FakeTemporal();
    hub = new WatchHub(temporal, { retryDelaysMs: [100] });
  });
  afterEach(() => {
    hub.close();
    vi.useRealTimers();
  });

  it('many waits on one authorization share one watch: one read, one long poll', async () => {
    const waits = Array.from({ length: 50 }, () => hub.wait(ID, { waitSeconds: 30 }));
    await vi.advanceTimersByTimeAsync(10);
    expect(hub.watching).toBe(1);
    expect(hub.waiting).toBe(50);
    expect(temporal.reads).toBe(1);
    expect(temporal.longPollsStarted).toBe(1);

    temporal.change('stored');
    const answers = await Promise.all(waits);
    expect(answers.map((a) => a.state)).toEqual(Array(50).fill('stored'));
    // One read for the change, whatever the number of waits.
    expect(temporal.reads).toBe(2);
  });

  it('a change wakes every wait at once, and the watch stops with its last wait', async () => {
    const waits = Array.from({ length: 5 }, () => hub.wait(ID, { waitSeconds: 30, knownState: 'drafted' }));
    await vi.advanceTimersByTimeAsync(10);
    temporal.change('stored');
    await vi.advanceTimersByTimeAsync(0);
    await expect(Promise.all(waits)).resolves.toHaveLength(5);
    expect(hub.watching).toBe(0);
    expect(temporal.longPollsOpen).toBe(0);
  });

  it('leaving stops it: when the last wait ends, its long poll is ended too', async () => {
    const short = hub.wait(ID, { waitSeconds: 5 });
    const long = hub.wait(ID, { waitSeconds: 20 });
    await vi.advanceTimersByTimeAsync(5_000);
    await expect(short).resolves.toMatchObject({ state: 'drafted' });
    // One wait is still there: the watch goes on.
    expect(hub.watching).toBe(1);
    expect(temporal.longPollsOpen).toBe(1);
    await vi.advanceTimersByTimeAsync(15_000);
    await expect(long).resolves.toMatchObject({ state: 'drafted' });
    expect(hub.watching).toBe(0);
    expect(temporal.longPollsOpen).toBe(0);
    // The next wait starts a watch of its own.
    const again = hub.wait(ID, { waitSeconds: 30 });
    await vi.advanceTimersByTimeAsync(10);
    expect(temporal.longPollsStarted).toBe(2);
    temporal.change('voided');
    await expect(again).resolves.toMatchObject({ state: 'voided' });
  });

  it('a later wait joins with no call at all, and counts changes from the state it was given', async () => {
    const first = hub.wait(ID, { waitSeconds: 30 });
    await vi.advanceTimersByTimeAsync(10);
    const readsBefore = temporal.reads;
    const joined = hub.wait(ID, { waitSeconds: 30 });
    // The caller already saw `stored` elsewhere: the wait answers at once with what the watch has.
    await expect(hub.wait(ID, { waitSeconds: 30, knownState: 'stored' })).resolves.toMatchObject({ state: 'drafted' });
    expect(temporal.reads).toBe(readsBefore);
    temporal.change('stored');
    await expect(Promise.all([first, joined])).resolves.toMatchObject([{ state: 'stored' }, { state: 'stored' }]);
  });

  it('a quiet long poll reads nothing; a final state answers at once and starts no long poll', async () => {
    const waiting = hub.wait(ID, { waitSeconds: 30 });
    await vi.advanceTimersByTimeAsync(10);
    temporal.deliver('quiet');
    temporal.deliver('quiet');
    await vi.advanceTimersByTimeAsync(10);
    expect(temporal.reads).toBe(1);
    temporal.change('captured');
    await expect(waiting).resolves.toMatchObject({ state: 'captured' });

    const polls = temporal.longPollsStarted;
    await expect(hub.wait(ID, { waitSeconds: 30 })).resolves.toMatchObject({ state: 'captured' });
    expect(temporal.longPollsStarted).toBe(polls);
  });

  it('a first read that finds Temporal unreachable fails every wait on it; the next wait starts afresh', async () => {
    temporal.failReads = [unavailable()];
    const waits = [hub.wait(ID, { waitSeconds: 30 }), hub.wait(ID, { waitSeconds: 30 })];
    await expect(Promise.all(waits)).rejects.toMatchObject({ code: 'temporal_unavailable' });
    expect(hub.watching).toBe(0);
    const next = hub.wait(ID, { waitSeconds: 30 });
    await vi.advanceTimersByTimeAsync(10);
    expect(hub.watching).toBe(1);
    temporal.change('stored');
    await expect(next).resolves.toMatchObject({ state: 'stored' });
  });

  it('an unknown authorization is 404 to the wait, as GET says', async () => {
    temporal.failReads = [new AuthcapError('not_found', 'no authorization with that id')];
    await expect(hub.wait(ID, { waitSeconds: 30 })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('reads made on the waits behalf that fail are retried, never answered as errors', async () => {
    const waiting = hub.wait(ID, { waitSeconds: 30 });
    await vi.advanceTimersByTimeAsync(10);
    temporal.failReads = [unavailable(), unavailable()];
    temporal.change('stored');
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(waiting).resolves.toMatchObject({ state: 'stored' });
    expect(temporal.reads).toBe(4);
  });

  it('a long poll that fails is started again, and a wait still ends with the resource as it last stood', async () => {
    const waiting = hub.wait(ID, { waitSeconds: 30 });
    await vi.advanceTimersByTimeAsync(10);
    temporal.deliver(new Error('UNAVAILABLE'));
    await vi.advanceTimersByTimeAsync(100);
    expect(temporal.longPollsStarted).toBe(2);
    temporal.deliver(new Error('UNAVAILABLE'));
    // Still failing when the wait ends: it had its answer from the first read, so that is what it gets.
    await vi.advanceTimersByTimeAsync(30_000);
    await expect(waiting).resolves.toMatchObject({ state: 'drafted' });
  });

  it('is 503 only when nothing answered for a whole wait that joined while Temporal was failing', async () => {
    const early = hub.wait(ID, { waitSeconds: 30 });
    await vi.advanceTimersByTimeAsync(10);
    // Temporal goes away: every long poll fails from now on.
    const failing = setInterval(() => temporal.deliver(new Error('UNAVAILABLE')), 50);
    await vi.advanceTimersByTimeAsync(1_000);
    const late = hub.wait(ID, { waitSeconds: 10 });
    const lateOutcome = late.catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await lateOutcome).toMatchObject({ code: 'temporal_unavailable' });
    clearInterval(failing);
    // Back: the next long poll answers, and the early wait, still open, hears of the change.
    temporal.deliver('quiet');
    await vi.advanceTimersByTimeAsync(200);
    temporal.change('stored');
    await expect(early).resolves.toMatchObject({ state: 'stored' });
  });

  it('an attempt that can never change again (its long poll ended) answers at the deadline with how it ended', async () => {
    const ended: WatchSource = {
      read: (id) => temporal.read(id),
      // A history that is already closed: nothing more to tell.
      changes: async function* () {},
    };
    const closedHub = new WatchHub(ended);
    const waiting = closedHub.wait(ID, { waitSeconds: 30 });
    await vi.advanceTimersByTimeAsync(30_000);
    await expect(waiting).resolves.toMatchObject({ state: 'drafted' });
    expect(closedHub.watching).toBe(0);
  });
});
