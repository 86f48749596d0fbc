// A feed scan is several visibility calls. A hundred callers asking at once must not become a
// thousand calls queued inside Temporal, each running into its deadline and reported as "Temporal is
// down" while it is only busy. So: identical requests share one scan, and its answer for a moment
// after; a few scans run at a time; a bounded number wait their turn, for a bounded time; past that
// the caller hears "busy, retry in a second" (429), never a false outage.
import { AuthcapError } from '../../domain/errors.js';

export interface ScanGateOptions {
  /** Scans running at once (each makes one visibility call at a time). */
  concurrency: number;
  /** Scans waiting for a turn; one more is refused. */
  maxQueued: number;
  /** How long a scan may wait for a turn before it is refused. */
  maxWaitMs: number;
  /** How long a finished scan's answer serves identical requests. */
  reuseMs: number;
  /** Answers kept for reuse at most (in-flight ones included). */
  maxEntries: number;
}

interface Shared<T> {
  result: Promise<T>;
  /** Infinity while the scan runs: until it settles, everyone asking joins it. */
  until: number;
}

export class ScanGate<T> {
  private running = 0;
  private readonly waiting: { go: () => void; timer: NodeJS.Timeout }[] = [];
  private readonly shared = new Map<string, Shared<T>>();

  constructor(private readonly options: ScanGateOptions) {}

  /** The scan's answer for `key`: shared with identical requests in flight or just answered. */
  run(key: string, scan: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = this.shared.get(key);
    if (hit && hit.until >= now) return hit.result;
    const entry: Shared<T> = { result: this.limited(scan), until: Infinity };
    this.sweep(now);
    if (this.shared.size < this.options.maxEntries) this.shared.set(key, entry);
    entry.result.then(
      () => {
        entry.until = Date.now() + this.options.reuseMs;
      },
      // A failure is not an answer to keep: the next caller tries again.
      () => {
        if (this.shared.get(key) === entry) this.shared.delete(key);
      },
    );
    return entry.result;
  }

  /** Scans running and waiting, for tests and metrics. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  private async limited(scan: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await scan();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.running < this.options.concurrency) {
      this.running += 1;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.options.maxQueued) return Promise.reject(feedBusy());
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        go: resolve,
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          reject(feedBusy());
        }, this.options.maxWaitMs),
      };
      // A CLI that is done must not stay alive for a queue timer.
      waiter.timer.unref();
      this.waiting.push(waiter);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (!next) {
      this.running -= 1;
      return;
    }
    // The slot passes straight to the next scan: `running` stays as it is.
    clearTimeout(next.timer);
    next.go();
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.shared) if (entry.until < now) this.shared.delete(key);
  }
}

export function feedBusy(): AuthcapError {
  return new AuthcapError('rate_limited', 'the events feed is busy; retry in 1 s', { retryAfterSeconds: 1 });
}
