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
  private stopped = false;
  private client: { transport: { getRpcClient(): Promise<{ close(): void }> } } | undefined;

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

  /** How long a wait should sleep before asking the node itself: longer while blocks are being announced. */
  fallbackMs(pollingIntervalMs: number): number {
    return this.latest !== undefined && Date.now() - this.lastAnnouncedAt < 2_000 ? Math.max(pollingIntervalMs, 1_000) : pollingIntervalMs;
  }

  stop(): void {
    this.stopped = true;
    this.closeSubscription();
    for (const waiter of [...this.waiters]) waiter.resolve(undefined);
  }

  /** Ends the subscription and closes its socket (viem would otherwise keep reconnecting it). */
  private closeSubscription(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    const client = this.client;
    this.client = undefined;
    if (client) void client.transport.getRpcClient().then((rpc) => rpc.close(), () => undefined);
  }

  private restart(): void {
    this.closeSubscription();
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
    if (this.started || this.stopped || !this.wsUrl) return;
    this.started = true;
    this.lastAnnouncedAt = Date.now();
    try {
      const client = createPublicClient({ chain: this.chain, transport: webSocket(this.wsUrl, { retryCount: 0, reconnect: { attempts: 3, delay: 1_000 } }) });
      this.client = client as unknown as typeof this.client;
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
