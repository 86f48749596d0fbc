// Delivers the events of every workflow that keeps them in its memo (authorizations and refunds) to
// one webhook endpoint: a long-running activity of that endpoint's
// dispatcher workflow (workflows/webhookDispatch.ts). It finds what moved through visibility (each
// such workflow stamps EventsUpdatedAt with its events), reads only the runs whose stamp changed, and
// delivers each attempt's events in order, each id once per success. Nothing per payment wakes a
// workflow: the cost of a webhook is a POST and a share of one visibility read a scan.
//
// What it has done is its cursor, heartbeated (a retried attempt, on any worker, goes on from there:
// an event delivered after the last heartbeat may be delivered again, under the same id) and handed
// back to the workflow every few minutes. An attempt whose event an endpoint refuses is retried on
// its own, with backoff, for 3 days (its later events wait behind it); an endpoint that refuses
// everything is paused, and scanning resumes where it stopped once it answers again.
import { endpointWants, type RecordedEvent, type WebhookEndpointRecord } from '../domain/events.js';
import type { DispatchCursor, DispatchRun } from '../domain/webhookDispatch.js';
import { noWebhookMetrics, webhookDeliveryMetrics, type WebhookDeliveryMetrics } from '../runtime/webhookMetrics.js';

export type { DispatchCursor, DispatchRun };

/** How far behind its stamp a run may become visible (visibility is eventually consistent). */
export const VISIBILITY_LAG_MS = 10_000;
/** Between scans of visibility. */
export const SCAN_EVERY_MS = 1_000;
/** An attempt's event refused for this long is given up (it stays in the feed): Stripe's 3 days. */
export const GIVE_UP_AFTER_MS = 3 * 86_400_000;
const LONGEST_BACKOFF_MS = 3_600_000;
/** Refusals in a row, over different attempts, after which the endpoint is taken to be down. */
const DOWN_AFTER = 3;
/**
 * How long a step may trust the endpoint an earlier step read, while no event waits on a newer read
 * (a registry query saved per second). Events recorded after that read wait for the next read, so a
 * deletion is never outrun by a cached endpoint.
 */
export const ENDPOINT_FRESH_MS = 5_000;

/** A workflow run whose events moved, as visibility lists it. */
export interface EventfulRun {
  /** The attempt's name in event ids (its first run id): the same over continue-as-new. */
  key: string;
  workflowId: string;
  runId: string;
  /** Its EventsUpdatedAt (ISO-8601). */
  updatedAt: string;
  /** Its events, read (decrypted) only when asked. */
  events(): Promise<RecordedEvent[]>;
}

export interface DispatchSources {
  changedSince(since: Date): Promise<EventfulRun[]>;
  /** An attempt's events as they stand now (its latest run), for a retry. */
  eventsOf(workflowId: string): Promise<RecordedEvent[]>;
  endpoint(id: string): Promise<WebhookEndpointRecord | undefined>;
  /** One delivery attempt; throws when the endpoint did not take it. */
  deliver(endpoint: WebhookEndpointRecord, event: RecordedEvent): Promise<void>;
}

export function initialCursor(now: number): DispatchCursor {
  return { windowStart: new Date(now).toISOString(), handled: {}, seen: {}, retries: {}, totals: { delivered: 0, failed: 0 } };
}

export class WebhookDispatcher {
  /** The endpoint as last read, and when that read began (nothing recorded later is sent on it). */
  private lastRead: { at: number; record: WebhookEndpointRecord | undefined } | undefined;
  /** The last step left events recorded after its read: the next step reads the endpoint again. */
  private heldBack = false;

  constructor(
    private readonly endpointId: string,
    private readonly sources: DispatchSources,
    readonly cursor: DispatchCursor,
    private readonly now: () => number = Date.now,
    private readonly metrics: WebhookDeliveryMetrics = noWebhookMetrics,
  ) {}

  /** One scan and the retries that are due. Returns false once the endpoint is deleted. */
  async step(): Promise<boolean> {
    // Only events recorded before the endpoint was read are this step's: one recorded later may
    // follow the endpoint's deletion, and a later step reads the endpoint again before sending it.
    const { at: readAt, record: endpoint } = await this.readEndpoint();
    if (!endpoint) return false;
    this.heldBack = false;
    const asOfRead = (event: RecordedEvent) => {
      const before = Date.parse(event.recordedAt) <= readAt;
      if (!before) this.heldBack = true;
      return before;
    };
    await this.retryDue(endpoint, asOfRead);
    if (!this.paused()) await this.scan(endpoint, asOfRead);
    this.prune();
    this.metrics.state({ retrying: Object.keys(this.cursor.retries).length, paused: this.takenDown() });
    return true;
  }

  private async readEndpoint(): Promise<{ at: number; record: WebhookEndpointRecord | undefined }> {
    const last = this.lastRead;
    if (last && !this.heldBack && this.now() - last.at <= ENDPOINT_FRESH_MS) return last;
    const at = this.now();
    this.lastRead = { at, record: await this.sources.endpoint(this.endpointId) };
    return this.lastRead;
  }

  /** Refused the last few deliveries in a row, nothing accepted since: scanning waits between probes. */
  private takenDown(): boolean {
    return (this.cursor.refusalsInARow ?? 0) >= DOWN_AFTER;
  }

  private paused(): boolean {
    return this.cursor.pausedUntil !== undefined && this.now() < Date.parse(this.cursor.pausedUntil);
  }

  private async scan(endpoint: WebhookEndpointRecord, asOfRead: (event: RecordedEvent) => boolean): Promise<void> {
    const scanStart = this.now();
    // An endpoint down for longer than retries last: what is older is given up (the feed has it).
    const floor = scanStart - GIVE_UP_AFTER_MS;
    if (Date.parse(this.cursor.windowStart) < floor) this.cursor.windowStart = new Date(floor).toISOString();
    const since = Date.parse(this.cursor.windowStart) - VISIBILITY_LAG_MS;
    const runs = (await this.sources.changedSince(new Date(since))).sort((a, b) => (a.updatedAt < b.updatedAt ? -1 : 1));
    for (const run of runs) {
      if (this.cursor.retries[run.key] || this.cursor.seen[run.runId] === run.updatedAt) continue;
      const handled = this.cursor.handled[run.key]?.sequence ?? 0;
      // Events older than the window were handled by earlier scans (or belong to attempts pruned since).
      const fresh = (await run.events()).filter((e) => e.sequence > handled && Date.parse(e.recordedAt) >= since);
      const readable = fresh.filter(asOfRead);
      const done = await this.deliverInOrder(endpoint, run.key, run.workflowId, readable, run.updatedAt);
      if (!done && this.paused()) return; // the rest of this scan is read again once the endpoint answers
      // A run with events newer than the read stays unseen: the next scan reads it again.
      if (readable.length === fresh.length) this.cursor.seen[run.runId] = run.updatedAt;
    }
    this.cursor.windowStart = new Date(scanStart).toISOString();
  }

  /** Delivers in order; on a refusal the attempt goes to the retries (its later events wait). */
  private async deliverInOrder(endpoint: WebhookEndpointRecord, key: string, workflowId: string, events: RecordedEvent[], updatedAt: string): Promise<boolean> {
    for (const event of events.sort((a, b) => a.sequence - b.sequence)) {
      if (this.wants(endpoint, event)) {
        try {
          await this.sources.deliver(endpoint, event);
          this.metrics.delivery('delivered');
          this.cursor.totals.delivered += 1;
          this.cursor.refusalsInARow = 0;
        } catch (err) {
          this.metrics.delivery('refused');
          const now = new Date(this.now()).toISOString();
          this.cursor.retries[key] = {
            workflowId,
            nextSequence: event.sequence,
            attempts: 1,
            since: now,
            nextAt: this.later(1),
            lastError: String((err as Error).message),
          };
          this.refused();
          return false;
        }
      }
      this.cursor.handled[key] = { sequence: event.sequence, updatedAt };
    }
    return true;
  }

  private async retryDue(endpoint: WebhookEndpointRecord, asOfRead: (event: RecordedEvent) => boolean): Promise<void> {
    for (const [key, retry] of Object.entries(this.cursor.retries)) {
      if (this.now() < Date.parse(retry.nextAt)) continue;
      const events = (await this.sources.eventsOf(retry.workflowId)).filter((e) => e.sequence >= retry.nextSequence).sort((a, b) => a.sequence - b.sequence);
      let blocked = false;
      for (const event of events) {
        // Recorded after the endpoint was read: the retry stays due, for the next step.
        if (!asOfRead(event)) {
          blocked = true;
          break;
        }
        if (this.wants(endpoint, event)) {
          try {
            await this.sources.deliver(endpoint, event);
            this.metrics.delivery('delivered');
            this.cursor.totals.delivered += 1;
            this.cursor.refusalsInARow = 0;
            this.cursor.pausedUntil = undefined;
            // The next event of this attempt has a backoff of its own.
            retry.attempts = 0;
            retry.since = new Date(this.now()).toISOString();
          } catch (err) {
            if (this.now() - Date.parse(retry.since) < GIVE_UP_AFTER_MS) {
              this.metrics.delivery('refused');
              retry.attempts += 1;
              retry.nextAt = this.later(retry.attempts);
              retry.lastError = String((err as Error).message);
              this.refused();
              blocked = true;
              break;
            }
            // Three days of refusals: this event is given up (it stays in the feed); the next one goes on.
            this.metrics.delivery('given_up');
            this.cursor.totals.failed += 1;
            retry.since = new Date(this.now()).toISOString();
            retry.attempts = 0;
          }
        }
        retry.nextSequence = event.sequence + 1;
        this.cursor.handled[key] = { sequence: event.sequence, updatedAt: new Date(this.now()).toISOString() };
      }
      if (!blocked) delete this.cursor.retries[key];
    }
  }

  /** Subscribed when the event was recorded, and to its type. */
  private wants(endpoint: WebhookEndpointRecord, event: RecordedEvent): boolean {
    return endpointWants(endpoint, event.type) && event.recordedAt >= endpoint.createdAt;
  }

  private refused(): void {
    this.cursor.refusalsInARow = (this.cursor.refusalsInARow ?? 0) + 1;
    // Refusing everything (several attempts in a row): down. Scanning waits; the retries probe it.
    if (this.cursor.refusalsInARow >= DOWN_AFTER) this.cursor.pausedUntil = this.later(this.cursor.refusalsInARow - DOWN_AFTER + 1);
  }

  /** Exponential backoff from 1 s, doubling each time, at most an hour apart. */
  private later(attempt: number): string {
    return new Date(this.now() + Math.min(1_000 * 2 ** (attempt - 1), LONGEST_BACKOFF_MS)).toISOString();
  }

  /** What the cursor keeps stays bounded: runs and attempts not stamped since the window (and its lag) are forgotten. */
  private prune(): void {
    const horizon = new Date(Date.parse(this.cursor.windowStart) - VISIBILITY_LAG_MS - 60_000).toISOString();
    for (const [runId, at] of Object.entries(this.cursor.seen)) if (at < horizon) delete this.cursor.seen[runId];
    for (const [key, at] of Object.entries(this.cursor.handled)) if (at.updatedAt < horizon && !this.cursor.retries[key]) delete this.cursor.handled[key];
  }
}

/** How long one activity attempt runs before it hands its cursor to the workflow (which records it). */
export const SLICE_MS = 5 * 60_000;

/**
 * The activity: scans and delivers for a slice of time, heartbeating its cursor, then returns it.
 * `heartbeat` is Temporal's (it throws once the activity is cancelled); `resumed` its last details.
 */
export async function dispatchForSlice(
  endpointId: string,
  start: DispatchCursor | undefined,
  deps: {
    sources: DispatchSources;
    heartbeat(cursor: DispatchCursor): void;
    resumed?: DispatchCursor;
    sleep(ms: number): Promise<void>;
    log(message: string): void;
    /** Default: the worker's Prometheus metrics for this endpoint (runtime/webhookMetrics.ts). */
    metrics?: WebhookDeliveryMetrics;
  },
): Promise<DispatchRun> {
  const metrics = deps.metrics ?? webhookDeliveryMetrics(endpointId);
  const dispatcher = new WebhookDispatcher(endpointId, deps.sources, deps.resumed ?? start ?? initialCursor(Date.now()), Date.now, metrics);
  try {
    const until = Date.now() + SLICE_MS;
    while (Date.now() < until) {
      try {
        if (!(await dispatcher.step())) return { cursor: dispatcher.cursor, endpointDeleted: true };
      } catch (err) {
        // Temporal or the endpoint's registry unreachable for a moment: the next step tries again.
        deps.log(`webhook dispatch for ${endpointId}: ${(err as Error).message}`);
      }
      deps.heartbeat(dispatcher.cursor);
      await deps.sleep(SCAN_EVERY_MS);
    }
    return { cursor: dispatcher.cursor, endpointDeleted: false };
  } finally {
    // Returned, cancelled (the heartbeat throws) or failed: the next slice, maybe on another worker, reports.
    metrics.end();
  }
}
