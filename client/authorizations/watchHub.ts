// Waits for an authorization's state to change (GET …?wait=, `authcap get --wait`), shared: every
// wait in this process on one authorization joins one watch of it. The first wait starts the watch
// (one read of the memo, then Temporal's long poll on the attempt's history); later ones join it and
// cost no call at all; the watch stops when its last wait leaves. So what Temporal sees grows with
// the authorizations being waited on, not with the requests, and an idle one costs an open long poll
// and nothing else: the memo is read again only when the history says it may have changed.
import type { AuthorizationResource } from '../../domain/authorization.js';
import { finalStates } from '../../domain/authorization.js';
import { AuthcapError } from '../../domain/errors.js';
import type { RecordChange } from '../transport/historyLongPoll.js';

export type { RecordChange };

/** Longest wait a request may ask for: under common proxy and load-balancer idle timeouts. */
export const MAX_WAIT_SECONDS = 30;

export interface WatchSource {
  /** The authorization as it stands (its memo). */
  read(id: string): Promise<AuthorizationResource>;
  /**
   * The attempt's history as Temporal's long poll delivers it: `changed` once events arrived that may
   * have changed the record (the first answer always does: it may hold events newer than the first
   * read), `quiet` when a poll ended with nothing new. It ends when the attempt can never change
   * again (closed other than by continue-as-new), throws when a poll fails, and stops on `signal`.
   */
  changes(id: string, signal: AbortSignal): AsyncIterable<RecordChange>;
}

export interface WatchHubOptions {
  /** Pauses between failed calls of a watch (the last one repeats): a Temporal that is down is not hammered. */
  retryDelaysMs?: readonly number[];
}

export interface WaitRequest {
  waitSeconds: number;
  /** The state the caller has; default its state when the wait begins. */
  knownState?: string;
}

const DEFAULT_RETRY_DELAYS_MS = [250, 500, 1_000, 2_000, 5_000];

interface Waiter {
  joinedAt: number;
  /** Set once the waiter knows its state; until then no change can answer it. */
  known?: string;
  answer?: (resource: AuthorizationResource) => void;
}

/** One authorization being watched for every wait on it. */
interface Watch {
  id: string;
  waiters: Set<Waiter>;
  /** The first read: waits that join before it answers take their state from it (and its failure). */
  first: Promise<AuthorizationResource>;
  latest?: AuthorizationResource;
  /** When `latest` was last known current: a read, or a long poll that answered. */
  confirmedAt: number;
  /** Set while the watch's calls to Temporal fail; cleared by the next one that answers. */
  failingSince?: number;
  /** Whether the long poll runs: only once a wait has to wait (one answered by the first read needs none). */
  following: boolean;
  /** Aborts the long poll in flight when the last wait leaves. */
  stop: AbortController;
}

const isFinal = (resource: AuthorizationResource | undefined) => resource !== undefined && (finalStates as readonly string[]).includes(resource.state);
const answers = (resource: AuthorizationResource, known: string) => resource.state !== known || isFinal(resource);

export class WatchHub {
  private readonly watches = new Map<string, Watch>();
  private readonly retryDelaysMs: readonly number[];

  constructor(
    private readonly source: WatchSource,
    options: WatchHubOptions = {},
  ) {
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  }

  /** How many authorizations are watched now: one long poll on Temporal each. */
  get watching(): number {
    return this.watches.size;
  }

  /** How many waits are open now, over every watch. */
  get waiting(): number {
    let count = 0;
    for (const watch of this.watches.values()) count += watch.waiters.size;
    return count;
  }

  /**
   * The resource as soon as its state differs from `knownState` (default: its state now) or is final,
   * else as it last stood once `waitSeconds` have passed. Only a Temporal that cannot be reached makes
   * a wait fail (`temporal_unavailable`): the first read of a new watch failed, or nothing answered for
   * the whole wait while the watch's calls kept failing. A failed read later in a wait is retried on
   * the waiters' behalf and never reaches them.
   */
  async wait(id: string, request: WaitRequest): Promise<AuthorizationResource> {
    const joinedAt = Date.now();
    const deadline = joinedAt + Math.min(Math.max(0, request.waitSeconds), MAX_WAIT_SECONDS) * 1000;
    const watch = this.watches.get(id) ?? this.start(id);
    const waiter: Waiter = { joinedAt };
    // Joined before the first read answers, so the watch stays up for it.
    watch.waiters.add(waiter);
    let timer: NodeJS.Timeout | undefined;
    try {
      if (!watch.latest) await watch.first;
      // The latest value, not the first read's: a change published meanwhile counts from here.
      const current = watch.latest!;
      const known = request.knownState ?? current.state;
      if (answers(current, known) || Date.now() >= deadline) return current;
      return await new Promise<AuthorizationResource>((resolve, reject) => {
        waiter.known = known;
        waiter.answer = resolve;
        this.follow(watch);
        timer = setTimeout(
          () => {
            // Nothing answered for this whole wait and the calls are failing: that is an outage, not an answer.
            if (watch.failingSince !== undefined && watch.confirmedAt < waiter.joinedAt) reject(unreachable());
            else resolve(watch.latest!);
          },
          Math.max(0, deadline - Date.now()),
        );
      });
    } finally {
      clearTimeout(timer);
      this.leave(watch, waiter);
    }
  }

  /** Ends every watch (the client is closing): open waits answer at their deadlines with what they have. */
  close(): void {
    for (const watch of [...this.watches.values()]) this.end(watch);
  }

  private start(id: string): Watch {
    const first = this.source.read(id).then(
      (resource) => {
        this.publish(watch, resource);
        return resource;
      },
      (err: unknown) => {
        // No value to keep: the waits that joined fail with it, and the next wait starts afresh.
        this.end(watch);
        throw err;
      },
    );
    // Waits attached to `first` see its failure; this keeps it from being reported as unhandled too.
    first.catch(() => undefined);
    const watch: Watch = { id, waiters: new Set(), first, confirmedAt: 0, following: false, stop: new AbortController() };
    this.watches.set(id, watch);
    return watch;
  }

  private follow(watch: Watch): void {
    if (watch.following) return;
    watch.following = true;
    void this.followLongPoll(watch);
  }

  /** Follows Temporal's long poll until the record is final, the attempt closes for good, or the watch stops. */
  private async followLongPoll(watch: Watch): Promise<void> {
    let failures = 0;
    while (!watch.stop.signal.aborted && !isFinal(watch.latest)) {
      try {
        for await (const change of this.source.changes(watch.id, watch.stop.signal)) {
          if (watch.stop.signal.aborted) return;
          this.answered(watch);
          failures = 0;
          if (change === 'changed') await this.refresh(watch);
          if (watch.stop.signal.aborted || isFinal(watch.latest)) return;
        }
        // The attempt closed for good: `latest` is how it ends, so waits answer with it at their deadlines.
        return;
      } catch {
        if (watch.stop.signal.aborted) return;
        this.failed(watch);
        await this.pause(watch, failures++);
      }
    }
  }

  /** Reads the record until a read succeeds (or the watch stops), then tells the waiters. */
  private async refresh(watch: Watch): Promise<void> {
    for (let failures = 0; !watch.stop.signal.aborted; failures++) {
      try {
        const resource = await this.source.read(watch.id);
        if (!watch.stop.signal.aborted) this.publish(watch, resource);
        return;
      } catch {
        if (watch.stop.signal.aborted) return;
        this.failed(watch);
        await this.pause(watch, failures);
      }
    }
  }

  private publish(watch: Watch, resource: AuthorizationResource): void {
    watch.latest = resource;
    this.answered(watch);
    for (const waiter of watch.waiters) {
      if (waiter.known !== undefined && answers(resource, waiter.known)) waiter.answer?.(resource);
    }
  }

  private answered(watch: Watch): void {
    watch.confirmedAt = Date.now();
    watch.failingSince = undefined;
  }

  private failed(watch: Watch): void {
    watch.failingSince ??= Date.now();
  }

  private pause(watch: Watch, failures: number): Promise<void> {
    const ms = this.retryDelaysMs[Math.min(failures, this.retryDelaysMs.length - 1)] ?? 1_000;
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        watch.stop.signal.removeEventListener('abort', done);
        resolve();
      }
      watch.stop.signal.addEventListener('abort', done, { once: true });
    });
  }

  private leave(watch: Watch, waiter: Waiter): void {
    watch.waiters.delete(waiter);
    if (watch.waiters.size === 0) this.end(watch);
  }

  private end(watch: Watch): void {
    if (this.watches.get(watch.id) === watch) this.watches.delete(watch.id);
    watch.stop.abort();
  }
}

function unreachable(): AuthcapError {
  return new AuthcapError('temporal_unavailable', 'Temporal is not reachable right now; retry shortly');
}
