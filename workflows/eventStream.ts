// One event stream per authorization attempt: it keeps the attempt's events in order (the events
// feed reads them from its memo) and delivers each to the webhook endpoints subscribed when it was
// recorded. Deliveries to one endpoint go in order, one at a time; endpoints do not wait for each
// other, and the authorization's own workflow never waits for any of them. Temporal retries each
// delivery with exponential backoff for up to 3 days.
import {
  condition,
  makeContinueAsNewFunc,
  defineSignal,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { EventActivities } from '../domain/activityContract.js';
import { eventMemoKey, finalEventTypes, parseEventId, type AuthcapEvent, type DeliveryOutcome, type EventType, type RecordedEvent } from '../domain/events.js';
import { EventTypesAttribute, EventsStartedAtAttribute, EventsUpdatedAtAttribute } from '../domain/searchAttributes.js';

export const eventsSignal = defineSignal<[AuthcapEvent[]]>('events');

/**
 * No more events will come: sent by a workflow whose events have no final type of their own (the
 * refunds workflow, when it closes). The stream ends once every delivery has ended.
 */
export const eventsEndSignal = defineSignal('eventsEnd');

/** Patch id: histories recorded when a batch rewrote the memo twice. */
export const ONE_MEMO_PER_BATCH_PATCH = 'events-memo-once-per-batch';

export interface EventStreamInput {
  orderId: string;
  firstRunId: string;
  /** The attempt's first events: the authorization starts its stream with them. */
  initial?: AuthcapEvent[];
  /** Continue-as-new: the events recorded so far (every delivery of them had ended). */
  carried?: { events: RecordedEvent[]; deliveries: Record<string, DeliverySummary> };
}

/** Per endpoint, for operators reading the stream in the Temporal UI. */
export interface DeliverySummary {
  delivered: number;
  skipped: number;
  failed: number;
  pending: number;
  last: DeliveryOutcome | null;
}

const lookups = proxyLocalActivities<EventActivities>({
  startToCloseTimeout: '10 seconds',
  localRetryThreshold: '5 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '30 seconds' },
});

// Stripe's schedule, in Temporal's terms: retried with exponential backoff for up to 3 days.
const deliveries = proxyActivities<EventActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '3 days',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 hour' },
});

const now = () => new Date().toISOString();

export async function authorizationEventsWorkflow(input: EventStreamInput): Promise<{ events: number }> {
  const events: RecordedEvent[] = [...(input.carried?.events ?? [])];
  const known = new Set(events.map((e) => e.id));
  const incoming: AuthcapEvent[] = [];
  const queues = new Map<string, RecordedEvent[]>();
  const summaries: Record<string, DeliverySummary> = { ...(input.carried?.deliveries ?? {}) };

  // Each id is kept once, whoever hands it over and however often.
  const accept = (batch: AuthcapEvent[]) => {
    for (const event of batch) {
      if (known.has(event.id)) continue;
      known.add(event.id);
      incoming.push(event);
    }
  };
  accept(input.initial ?? []);
  setHandler(eventsSignal, accept);
  let endRequested = false;
  setHandler(eventsEndSignal, () => {
    endRequested = true;
  });

  // Each event under its own key (written once, when recorded) and the delivery summaries: a memo
  // update rewrites only the keys it names, so a long stream does not rewrite its past at each step.
  const memoOf = (recorded: RecordedEvent[]) => ({ ...Object.fromEntries(recorded.map((e) => [eventMemoKey(e.sequence), e])), deliveries: summaries });
  const publish = (recorded: RecordedEvent[] = []) => upsertMemo(memoOf(recorded));
  const summaryOf = (endpointId: string) => (summaries[endpointId] ??= { delivered: 0, skipped: 0, failed: 0, pending: 0, last: null });
  const ended = () => endRequested || (events.length > 0 && finalEventTypes.includes(events[events.length - 1]!.type));
  const busy = () => [...queues.values()].some((queue) => queue.length > 0);

  const deliverAll = async (endpointId: string, queue: RecordedEvent[]) => {
    while (queue.length > 0) {
      const event = queue[0]!;
      let outcome: DeliveryOutcome;
      try {
        outcome = await deliveries.deliverWebhook({ endpointId, event });
      } catch (err) {
        // Three days of refusals: give up on this event (it stays in the feed) and go on with the next.
        log.warn('webhook delivery abandoned', { endpointId, eventId: event.id, error: (err as Error).message });
        outcome = { endpointId, status: 'failed', at: now() };
      }
      const summary = summaryOf(endpointId);
      summary[outcome.status] += 1;
      summary.pending -= 1;
      summary.last = outcome;
      queue.shift();
      publish();
    }
  };

  const record = async (batch: AuthcapEvent[]) => {
    const at = now();
    const recorded = batch
      .map((event) => ({ ...event, sequence: parseEventId(event.id)?.sequence ?? 0, recordedAt: at }))
      .sort((a, b) => a.sequence - b.sequence);
    events.push(...recorded);
    events.sort((a, b) => a.sequence - b.sequence);
    upsertSearchAttributes([
      { key: EventTypesAttribute, value: [...new Set(events.map((e) => e.type))] },
      { key: EventsStartedAtAttribute, value: new Date(events[0]!.recordedAt) },
      { key: EventsUpdatedAtAttribute, value: new Date(at) },
    ]);
    // The memo is rewritten whole: once per batch, after the subscribers are known, is enough (the
    // lookup is a local activity: the feed sees the batch in the same workflow task either way).
    if (!patched(ONE_MEMO_PER_BATCH_PATCH)) publish(recorded);
    // Endpoints are those subscribed when the event is recorded (an endpoint added later does not
    // receive what came before it; the feed has it).
    const subscribers = await lookups.webhookSubscribers({ types: [...new Set(recorded.map((e) => e.type))] as EventType[] });
    for (const event of recorded) {
      for (const endpointId of subscribers[event.type] ?? []) {
        let queue = queues.get(endpointId);
        const idle = !queue || queue.length === 0;
        if (!queue) queues.set(endpointId, (queue = []));
        queue.push(event);
        summaryOf(endpointId).pending += 1;
        if (idle) void deliverAll(endpointId, queue);
      }
    }
    publish(recorded);
  };

  for (;;) {
    const rollOver = () => !busy() && incoming.length === 0 && (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 5_000);
    await condition(() => incoming.length > 0 || (ended() && !busy()) || rollOver());
    if (incoming.length > 0) {
      await record(incoming.splice(0));
      continue;
    }
    if (ended() && !busy()) return { events: events.length };
    // The next run starts with every event in its memo (the feed reads it), in the same command.
    await makeContinueAsNewFunc<typeof authorizationEventsWorkflow>({ memo: memoOf(events) })({
      orderId: input.orderId,
      firstRunId: input.firstRunId,
      carried: { events, deliveries: summaries },
    });
  }
}
