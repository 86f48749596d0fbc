// New blocks as the node announces them (a `newHeads` subscription over WebSocket), shared by every
// wait in the worker process: a capture waiting for its block or its confirmation depth wakes when
// the block arrives, instead of each one polling the node on its own timer. Without a WebSocket (or
// when it drops) the waits simply time out and read the node themselves, as before.
import { createPublicClient, webSocket, type Chain } from 'viem';

/** No announcement for this long while waits are open: the subscription is renewed. */
const RESUBSCRIBE_AFTER_MS = 15_000;

interface Waiter {
  after: bigint;
  resolve: (head: bigint | undefined) => void;
}

export class HeadFeed {
  private latest: bigint | undefined;
  private readonly waiters = new Set<Waiter>();
  private unwatch: (() => void) | undefined;
  private started = false;
  private lastAnnouncedAt = 0;

  constructor(private readonly chain: Chain, private readonly wsUrl: string | undefined) {}

  /** The newest block number announced so far (undefined before the first announcement). */
  get head(): bigint | undefined {
    return this.latest;
  }

  /**
   * Resolves with the first announced block above `after`, or with undefined after `timeoutMs`
   * (no subscription, or no block yet): then the caller asks the node itself.
   */
  nextHead(after: bigint, timeoutMs: number): Promise<bigint | undefined> {
    this.start();
    if (this.latest !== undefined && this.latest > after) return Promise.resolve(this.latest);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        after,
        resolve: (head) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(head);
        },
      };
      const timer = setTimeout(() => {
        // Silent for long while someone waits: the subscription may be dead; start a new one.
        if (this.started && Date.now() - this.lastAnnouncedAt > RESUBSCRIBE_AFTER_MS) this.restart();
        waiter.resolve(undefined);
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    for (const waiter of [...this.waiters]) waiter.resolve(undefined);
  }

  private restart(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    this.started = false;
    this.lastAnnouncedAt = Date.now();
    this.start();
  }

  private announce(head: bigint): void {
    this.lastAnnouncedAt = Date.now();
    if (this.latest !== undefined && head <= this.latest) return;
    this.latest = head;
    for (const waiter of [...this.waiters]) if (head > waiter.after) waiter.resolve(head);
  }

  private start(): void {
    if (this.started || !this.wsUrl) return;
    this.started = true;
    this.lastAnnouncedAt = Date.now();
    try {
      const client = createPublicClient({ chain: this.chain, transport: webSocket(this.wsUrl, { retryCount: 0, reconnect: true }) });
      this.unwatch = client.watchBlockNumber({
        emitMissed: false,
        onBlockNumber: (head) => this.announce(head),
        // A broken subscription leaves the waits to their own timeouts; viem's transport reconnects.
        onError: () => undefined,
      });
    } catch {
      this.unwatch = undefined;
    }
  }
}
