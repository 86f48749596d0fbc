// New blocks as the node announces them (a `newHeads` subscription over WebSocket), shared by every
// wait in the worker process: a capture waiting for its block or its confirmation depth wakes when
// the block arrives, instead of each one polling the node on its own timer. Without a WebSocket (or
// when it drops) the waits simply time out and read the node themselves: captures still work, only
// slower. So the feed also says how it is doing (`status()`), for the worker's /readyz
// and the API's, since nothing else would show that captures have quietly become slower.
import { createPublicClient, hexToBigInt, webSocket, type Chain, type Hex } from 'viem';

/** No announcement for this long while waits are open: the subscription is renewed. */
const RESUBSCRIBE_AFTER_MS = 15_000;
/** No announcement for this long at all: the feed counts as silent, and is renewed even with no wait open. */
export const SILENT_AFTER_MS = 60_000;
/** After a failed subscription, try again after this long, doubling up to the maximum. */
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/**
 * live: subscribed, blocks arrive. connecting: subscribing for the first time. failing: the socket
 * or the subscription failed (retried with backoff). silent: subscribed, but no block for a minute.
 * off: no WebSocket configured. Only `live` wakes waits at once; in every other state they poll.
 */
export type HeadFeedState = 'live' | 'connecting' | 'failing' | 'silent' | 'off';

export interface HeadFeedStatus {
  state: HeadFeedState;
  live: boolean;
  /** When the feed entered this state (ISO-8601). */
  since: string;
  /** When the last block was announced (ISO-8601), null before the first. */
  lastHeadAt: string | null;
  /** In words, for operators; never the URL (it may carry a provider key). */
  detail: string;
}

interface Waiter {
  after: bigint;
  resolve: (head: bigint | undefined) => void;
}

type SocketTransport = {
  subscribe(args: { params: ['newHeads']; onData: (data: { result?: { number?: Hex } }) => void; onError: (err: unknown) => void }): Promise<unknown>;
  getRpcClient(): Promise<{ close(): void }>;
};

export class HeadFeed {
  /** Told of every state change (the worker logs them). */
  onStateChange: ((status: HeadFeedStatus) => void) | undefined;
  private latest: bigint | undefined;
  private readonly waiters = new Set<Waiter>();
  private socket: { close(): void } | undefined;
  private started = false;
  private lastAnnouncedAt = 0;
  private lastHeadAt: number | undefined;
  private stopped = false;
  private state: HeadFeedState;
  private stateSince = Date.now();
  private failure = '';
  /** Bumped by every (re)subscription: answers from an abandoned one are ignored. */
  private epoch = 0;
  private retryMs = RETRY_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(
    private readonly chain: Chain,
    private readonly wsUrl: string | undefined,
    private readonly pollingIntervalMs = 200,
  ) {
    this.state = wsUrl ? 'connecting' : 'off';
  }

  /** The newest block number announced so far (undefined before the first announcement). */
  get head(): bigint | undefined {
    return this.latest;
  }

  /** Subscribes now rather than at the first wait, so the feed's state is known before any capture. */
  connect(): void {
    this.start();
    if (this.watchdog || this.stopped || !this.wsUrl) return;
    // With no wait open nobody would notice a subscription that went quiet: check now and then.
    this.watchdog = setInterval(() => {
      if (!this.started || this.state === 'failing' || Date.now() - this.lastAnnouncedAt <= SILENT_AFTER_MS) return;
      // A socket that never opened (a host that drops packets) is a failure like a refused one.
      if (this.state === 'connecting') this.failed(this.epoch, new Error(`no answer in ${SILENT_AFTER_MS / 1000} s`));
      else this.restart();
    }, SILENT_AFTER_MS / 4);
    this.watchdog.unref();
  }

  status(): HeadFeedStatus {
    let state = this.state;
    let since = this.stateSince;
    // Subscribed, yet nothing for a minute: a stuck socket or a node that stopped announcing.
    if (state === 'live' && Date.now() - this.lastAnnouncedAt > SILENT_AFTER_MS) {
      state = 'silent';
      since = this.lastAnnouncedAt + SILENT_AFTER_MS;
    }
    return {
      state,
      live: state === 'live',
      since: new Date(since).toISOString(),
      lastHeadAt: this.lastHeadAt === undefined ? null : new Date(this.lastHeadAt).toISOString(),
      detail: this.describe(state),
    };
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
        if (this.started && this.state !== 'failing' && Date.now() - this.lastAnnouncedAt > RESUBSCRIBE_AFTER_MS) this.restart();
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
    clearTimeout(this.retryTimer);
    clearInterval(this.watchdog);
    this.closeSubscription();
    for (const waiter of [...this.waiters]) waiter.resolve(undefined);
  }

  private describe(state: HeadFeedState): string {
    const polling = `waits poll the node every ${this.pollingIntervalMs} ms instead, so captures take longer`;
    switch (state) {
      case 'live':
        return 'new blocks are announced over the WebSocket subscription';
      case 'connecting':
        return 'subscribing to new blocks over the WebSocket';
      case 'failing':
        return `the WebSocket subscription to new blocks failed (${this.failure}); retrying, and ${polling}`;
      case 'silent':
        return `subscribed, but no block announced for over ${SILENT_AFTER_MS / 1000} s; ${polling}`;
      case 'off':
        return `no WebSocket configured (AUTHCAP_WS_URL is empty); ${polling}`;
    }
  }

  private setState(state: HeadFeedState): void {
    if (state === this.state) return;
    this.state = state;
    this.stateSince = Date.now();
    this.onStateChange?.(this.status());
  }

  /**
   * Closes the socket, which ends its subscription on the node too. Synchronous on purpose: viem
   * caches sockets by URL, and a dead one still in its cache would be handed to the next subscribe.
   */
  private closeSubscription(): void {
    this.epoch += 1;
    const socket = this.socket;
    this.socket = undefined;
    try {
      socket?.close();
    } catch {
      // already closed
    }
  }

  private restart(): void {
    if (!this.started || this.stopped) return;
    this.started = false;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.closeSubscription();
    this.start();
  }

  private announce(head: bigint): void {
    this.lastAnnouncedAt = Date.now();
    this.lastHeadAt = this.lastAnnouncedAt;
    this.setState('live');
    if (this.latest !== undefined && head <= this.latest) return;
    this.latest = head;
    for (const waiter of [...this.waiters]) if (head > waiter.after) waiter.resolve(head);
  }

  private failed(epoch: number, err: unknown): void {
    if (epoch !== this.epoch || this.stopped) return;
    this.failure = reasonOf(err);
    this.setState('failing');
    if (this.retryTimer) return;
    // Retried on our own clock (viem's reconnect is off for this socket), backing off while it fails.
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.restart();
    }, delay);
    this.retryTimer.unref();
  }

  private start(): void {
    if (this.started || this.stopped || !this.wsUrl) return;
    this.started = true;
    this.lastAnnouncedAt = Date.now();
    const epoch = ++this.epoch;
    void this.subscribe(this.wsUrl, epoch).catch((err) => this.failed(epoch, err));
  }

  private async subscribe(wsUrl: string, epoch: number): Promise<void> {
    // Its own socket (the reconnect setting keys viem's socket cache apart from the log watcher's),
    // so closing it here never ends the watcher's subscriptions. Reconnecting is ours: see failed().
    const client = createPublicClient({ chain: this.chain, transport: webSocket(wsUrl, { retryCount: 0, reconnect: { attempts: 0 } }) });
    const transport = client.transport as unknown as SocketTransport;
    const socket = await transport.getRpcClient();
    if (epoch !== this.epoch) return socket.close();
    this.socket = socket;
    await transport.subscribe({
      params: ['newHeads'],
      onData: (data) => {
        if (epoch === this.epoch && data.result?.number) this.announce(hexToBigInt(data.result.number));
      },
      onError: (err) => this.failed(epoch, err),
    });
    if (epoch !== this.epoch) return;
    this.retryMs = RETRY_MIN_MS;
    this.setState('live');
  }
}

/** Why the socket failed, in one short line without the URL (a provider's URL may carry its key). */
function reasonOf(err: unknown): string {
  const message = (err as { message?: unknown })?.message;
  const text = typeof message === 'string' && message ? message.split('\n')[0]! : ((err as Error)?.name ?? 'connection error');
  return text.replace(/\b(?:wss?|https?):\/\/\S+/gi, '<url>').slice(0, 160) || 'connection error';
}
