// client/events/scanGate.ts: what keeps a burst of feed requests from turning into a false outage.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuthcapError } from '../../../domain/errors.js';
import { ScanGate, type ScanGateOptions } from '../../../client/events/scanGate.js';

const options: ScanGateOptions = { concurrency: 2, maxQueued: 3, maxWaitMs: 5_000, reuseMs: 1_000, maxEntries: 100 };

/** A scan that finishes when told to, counting how often it ran. */
function controlled() {
  const pending: (() => void)[] = [];
  let calls = 0;
  const scan = (value: string) => () => {
    calls += 1;
    return new Promise<string>((resolve) => pending.push(() => resolve(value)));
  };
  return {
    scan,
    finishAll: () => {
      for (const f of pending.splice(0)) f();
    },
    calls: () => calls,
    pending: () => pending.length,
  };
}

const codeOf = (err: unknown) => (err instanceof AuthcapError ? err.code : String(err));

afterEach(() => vi.useRealTimers());

describe('ScanGate', () => {
  it('identical requests in flight share one scan', async () => {
    const gate = new ScanGate<string>(options);
    const c = controlled();
    const answers = Array.from({ length: 100 }, () => gate.run('same', c.scan('page')));
    await vi.waitFor(() => expect(c.pending()).toBe(1));
    c.finishAll();
    expect(await Promise.all(answers)).toEqual(Array(100).fill('page'));
    expect(c.calls()).toBe(1);
  });

  it('reuses an answer for reuseMs after it, then scans again', async () => {
    vi.useFakeTimers();
    const gate = new ScanGate<string>(options);
    let n = 0;
    const scan = async () => `answer ${++n}`;
    expect(await gate.run('k', scan)).toBe('answer 1');
    vi.advanceTimersByTime(900);
    expect(await gate.run('k', scan)).toBe('answer 1');
    vi.advanceTimersByTime(200);
    expect(await gate.run('k', scan)).toBe('answer 2');
    expect(await gate.run('other', scan)).toBe('answer 3');
  });

  it('does not keep a failure: the next caller scans afresh', async () => {
    const gate = new ScanGate<string>(options);
    await expect(
      gate.run('k', async () => {
        throw new AuthcapError('temporal_unavailable', 'down');
      }),
    ).rejects.toThrow('down');
    expect(await gate.run('k', async () => 'fine')).toBe('fine');
  });

  it('runs at most `concurrency` scans; a bounded queue waits; one more is 429 with a retry hint', async () => {
    const gate = new ScanGate<string>(options);
    const c = controlled();
    const results = Array.from({ length: 6 }, (_, i) =>
      gate.run(`k${i}`, c.scan(`v${i}`)).then(
        (v) => v,
        (err: unknown) => err,
      ),
    );
    await vi.waitFor(() => expect(c.pending()).toBe(2));
    expect(gate.load).toEqual({ running: 2, waiting: 3 });
    const refused = await results[5];
    expect(codeOf(refused)).toBe('rate_limited');
    expect((refused as AuthcapError).details).toEqual({ retryAfterSeconds: 1 });
    // Each finished scan hands its slot to the next waiting one, never more than two at once.
    while (c.calls() < 5 || c.pending() > 0) {
      expect(c.pending()).toBeLessThanOrEqual(2);
      c.finishAll();
      await new Promise((r) => setImmediate(r));
    }
    expect(await Promise.all(results.slice(0, 5))).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('a scan waiting longer than maxWaitMs is 429, and its place is given up', async () => {
    vi.useFakeTimers();
    const gate = new ScanGate<string>({ ...options, concurrency: 1 });
    const c = controlled();
    const first = gate.run('a', c.scan('a'));
    const second = gate.run('b', c.scan('b')).then(
      (v) => v,
      (err: unknown) => err,
    );
    await vi.advanceTimersByTimeAsync(5_001);
    expect(codeOf(await second)).toBe('rate_limited');
    expect(gate.load).toEqual({ running: 1, waiting: 0 });
    c.finishAll();
    expect(await first).toBe('a');
    expect(c.calls()).toBe(1);
  });
});
