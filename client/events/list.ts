// `events.list`, the events feed: every authorization's events, oldest first, after a cursor, so an order service
// that was down catches up without webhooks. Events live in the memo of their authorization's (or
// refunds ledger's) workflow; the feed finds those workflows through visibility, by the Events*
// search attributes they stamp. Visibility cannot sort, so the feed walks forward in windows of the
// time a workflow recorded its first event: once every workflow that started recording before a
// moment is read, every event recorded before that moment is known, and those are returned in order.
import type { Client } from '@temporalio/client';
import { decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
import { AuthcapError } from '../../domain/errors.js';
import { isEventMemoKey, eventsFromMemo, eventTypes, parseEventId, publicEvent, type AuthcapEvent, type RecordedEvent } from '../../domain/events.js';
import { parseOrderId } from '../requests.js';
import { serverCall } from '../transport/deadlines.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { feedBusy, ScanGate } from './scanGate.js';
import { quote } from '../visibilityQuery.js';
import { sealedEntries } from '../../domain/sealed.js';
import { REFUNDS_WORKFLOW_TYPE } from '../../domain/refunds.js';
import { EventsKeyAttribute } from '../../domain/searchAttributes.js';
import { WORKFLOW_TYPE } from '../../workflows/messages.js';

export interface ListEventsRequest {
  /** An event id: only events after it. Without one, the feed starts RETENTION_DAYS back. */
  after?: string;
  type?: string;
  orderId?: string;
  limit?: number;
}

export interface EventPage {
  data: AuthcapEvent[];
  /** More events are ready now: ask again with `after` = the last id. */
  hasMore: boolean;
}

/** How far back a feed read without a cursor starts (like Stripe's 30 days of events). */
export const RETENTION_DAYS = 30;
/**
 * Events recorded in the last moments are held back: a workflow's task may still be committing one
 * recorded a little earlier than what another workflow already shows, and a follower whose cursor
 * passed it would never see it.
 */
export const SETTLE_MS = 2_000;
/** Runs one visibility window may hold before the window is narrowed (two list pages). */
const WINDOW_CAP = 200;
const PAGE_SIZE = 100;

/** Feed scans per Temporal client: shared, bounded and queued (see scanGate.ts). */
const gates = new WeakMap<Client, ScanGate<EventPage>>();
const gateFor = (temporal: Client) => {
  let gate = gates.get(temporal);
  if (!gate) gates.set(temporal, (gate = new ScanGate<EventPage>({ concurrency: 4, maxQueued: 100, maxWaitMs: 5_000, reuseMs: 1_000, maxEntries: 1_000 })));
  return gate;
};

const iso = (ms: number) => new Date(ms).toISOString();
const isAfter = (e: RecordedEvent, cursor: { recordedAt: string; id: string } | undefined) =>
  !cursor || e.recordedAt > cursor.recordedAt || (e.recordedAt === cursor.recordedAt && e.id > cursor.id);
const byFeedOrder = (a: RecordedEvent, b: RecordedEvent) => (a.recordedAt === b.recordedAt ? (a.id < b.id ? -1 : 1) : a.recordedAt < b.recordedAt ? -1 : 1);

interface FeedRequest {
  after?: string;
  type?: string;
  orderId?: string;
  limit: number;
}

export async function list(transport: TemporalTransport, request: ListEventsRequest = {}): Promise<EventPage> {
  const { temporal } = transport;
  const limit = request.limit ?? 20;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100)
    throw new AuthcapError('validation_error', 'limit must be a whole number from 1 to 100', { field: 'limit' });
  if (request.type !== undefined && !(eventTypes as readonly string[]).includes(request.type)) {
    throw new AuthcapError('validation_error', `type must be one of ${eventTypes.join(', ')}`, { field: 'type' });
  }
  if (request.after !== undefined && (typeof request.after !== 'string' || !parseEventId(request.after))) {
    throw new AuthcapError('validation_error', 'after must be an event id (evt_…)', { field: 'after' });
  }
  const feed: FeedRequest = {
    after: request.after,
    type: request.type,
    limit,
    orderId: request.orderId === undefined ? undefined : parseOrderId(request.orderId),
  };
  // An answer a second old is still a right one (the feed holds back its last 2 s anyway): at
  // worst a follower asks once more for what settled since.
  const key = JSON.stringify([feed.after ?? null, feed.type ?? null, feed.orderId ?? null, feed.limit]);
  return structuredClone(await gateFor(temporal).run(key, () => busyUnlessDown(temporal, () => scan(temporal, feed))));
}

/**
 * A visibility call can miss its deadline because the server is busy (visibility queries are its
 * heaviest reads), not down. If the server still answers a cheap call, the caller hears "busy,
 * retry in a second" (429); only a server that answers nothing is `temporal_unavailable` (503).
 */
async function busyUnlessDown<T>(temporal: Client, scanning: () => Promise<T>): Promise<T> {
  try {
    return await scanning();
  } catch (err) {
    if (!(err instanceof AuthcapError) || err.code !== 'temporal_unavailable') throw err;
    const answers = await serverCall(temporal, () => temporal.workflowService.getSystemInfo({}), 2_000).then(
      () => true,
      () => false,
    );
    throw answers ? feedBusy() : err;
  }
}

async function scan(temporal: Client, request: FeedRequest): Promise<EventPage> {
  const { limit, orderId } = request;
  const cursor = request.after === undefined ? undefined : await locate(temporal, request.after);

  // Events live in the memo of the authorization or refunds workflow itself; only a run that recorded
  // events carries the Events* attributes.
  const clauses = [`WorkflowType IN ('${WORKFLOW_TYPE}', '${REFUNDS_WORKFLOW_TYPE}')`];
  if (orderId !== undefined) clauses.push(`OrderId = ${quote(orderId)}`);
  if (request.type !== undefined) clauses.push(`EventTypes = ${quote(request.type)}`);
  // Visibility's answer is re-checked: a store that matches loosely must not leak another order's events.
  const wanted = (e: RecordedEvent) =>
    isAfter(e, cursor) && (request.type === undefined || e.type === request.type) && (orderId === undefined || e.orderId === orderId);

  const settled = Date.now() - SETTLE_MS;
  const start = cursor ? Date.parse(cursor.recordedAt) : Date.now() - RETENTION_DAYS * 86_400_000;
  const events = new Map<string, RecordedEvent>();
  const keep = (found: RecordedEvent[]) => {
    for (const e of found.filter(wanted)) events.set(e.id, e);
  };
  // Runs that began recording before the cursor and have recorded something since: every one may hold the
  // next event, so all are read (as many as authorizations open across the cursor's moment).
  if (cursor)
    keep((await eventsOfRuns(temporal, [...clauses, `EventsStartedAt < ${quote(iso(start))}`, `EventsUpdatedAt >= ${quote(iso(start))}`], Infinity))!);

  let frontier = start;
  // Everything left at once when it is small (one count, a page or two); narrowed only where
  // runs are dense, so reaching back 30 days over empty time costs one call, not sixteen.
  let width = settled + 1 - frontier;
  const known = () => [...events.values()].filter((e) => Date.parse(e.recordedAt) < Math.min(frontier, settled));
  while (frontier <= settled && known().length <= limit) {
    const until = Math.min(frontier + width, settled + 1);
    const window = [...clauses, `EventsStartedAt >= ${quote(iso(frontier))}`, `EventsStartedAt < ${quote(iso(until))}`];
    // A window one millisecond wide cannot be split: it is read whole, however many runs it holds.
    const splittable = until - frontier > 1;
    const found =
      splittable && (await count(temporal, window)) > WINDOW_CAP ? undefined : await eventsOfRuns(temporal, window, splittable ? WINDOW_CAP : Infinity);
    if (!found) {
      width = Math.max(1, Math.floor((until - frontier) / 2));
      continue;
    }
    keep(found);
    frontier = until;
    width *= 2;
  }
  const ready = known().sort(byFeedOrder);
  return { data: ready.slice(0, limit).map(toPublic), hasMore: ready.length > limit };
}

/**
 * The event a cursor names: its place in the feed is its recordedAt. Read from the workflow that
 * keeps it in its memo, found by the key its event ids name (any of its runs).
 */
async function locate(temporal: Client, id: string): Promise<{ recordedAt: string; id: string }> {
  const parsed = typeof id === 'string' ? parseEventId(id) : undefined;
  if (!parsed) throw new AuthcapError('validation_error', 'after must be an event id (evt_…)');
  const found = (await eventsOfRuns(temporal, [`${EventsKeyAttribute.name} = ${quote(parsed.firstRunId)}`], Infinity))!.find((e) => e.id === id);
  if (!found) throw new AuthcapError('not_found', `no event ${id}`);
  return { recordedAt: found.recordedAt, id };
}

/** The events of every run matching the query; undefined when there are more than `cap` runs. */
async function eventsOfRuns(temporal: Client, clauses: string[], cap: number): Promise<RecordedEvent[] | undefined> {
  const converter = temporal.workflow.options.loadedDataConverter;
  const out: RecordedEvent[] = [];
  let count = 0;
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await serverCall(temporal, () =>
      temporal.workflowService.listWorkflowExecutions({
        namespace: temporal.options.namespace,
        query: clauses.join(' AND '),
        pageSize: PAGE_SIZE,
        nextPageToken,
      }),
    );
    for (const execution of page.executions ?? []) {
      if (++count > cap) return undefined;
      // A run's events count only as authcap sealed them: a forged run's memo reads as empty.
      // Only the events are decoded: an authorization's memo also holds its view, which the feed does not need.
      const fields = Object.fromEntries(Object.entries(execution.memo?.fields ?? {}).filter(([key]) => isEventMemoKey(key)));
      const memo = sealedEntries(await decodeMapFromPayloads(converter, fields as never));
      out.push(...eventsFromMemo(memo));
    }
    nextPageToken = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return out;
}

/** How many runs match: one cheap call that tells whether a window fits before reading it. */
async function count(temporal: Client, clauses: string[]): Promise<number> {
  const answer = await serverCall(temporal, () =>
    temporal.workflowService.countWorkflowExecutions({
      namespace: temporal.options.namespace,
      query: clauses.join(' AND '),
    }),
  );
  const raw = answer.count as unknown;
  return typeof raw === 'object' && raw !== null ? (raw as { toNumber(): number }).toNumber() : Number(raw ?? 0);
}

/** The feed serves events exactly as webhooks carry them. */
const toPublic = (event: RecordedEvent): AuthcapEvent => publicEvent(event);
