// The webhook delivery metrics: each POST counted once by outcome (delivered, refused, given up after
// 3 days), the refused attempts waiting and the endpoint taken for down reported after each step,
// and an ended slice's gauges removed while its counters stay.
import { describe, expect, it } from 'vitest';
import { GIVE_UP_AFTER_MS, WebhookDispatcher, dispatchForSlice, initialCursor, type DispatchSources } from '../../../activities/webhookDispatch.js';
import { eventId, type RecordedEvent, type WebhookEndpointRecord } from '../../../domain/events.js';
import { registry } from '../../../runtime/metrics.js';
import { webhookDeliveryMetrics, type DeliveryOutcome, type WebhookDeliveryMetrics } from '../../../runtime/webhookMetrics.js';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
const KEY = '0193aaaa-0000-7000-8000-000000000001';
const endpoint: WebhookEndpointRecord = {
  id: 'we_m',
  url: 'http://127.0.0.1:1/h',
  events: ['*'],
  description: null,
  createdAt: new Date(T0 - 1_000).toISOString(),
  secret: 's',
};

function recordedEvent(sequence: number, ms: number): RecordedEvent {
  const recordedAt = new Date(T0 + ms).toISOString();
  return {
    id: eventId(KEY, sequence),
    type: 'authorization.drafted',
    createdAt: recordedAt,
    orderId: 'o',
    data: { object: {} },
    sequence,
    recordedAt,
  } as unknown as RecordedEvent;
}

/** One attempt's run; `refusing` decides each POST. */
function sourcesWith(events: RecordedEvent[], state: { refusing: boolean; deleted?: boolean }): DispatchSources {
  const updatedAt = () => events.at(-1)!.recordedAt;
  return {
    changedSince: async () => [{ key: KEY, workflowId: `authorization-${KEY}`, runId: KEY, updatedAt: updatedAt(), events: async () => [...events] }],
    eventsOf: async () => [...events],
    endpoint: async () => (state.deleted ? undefined : endpoint),
    deliver: async () => {
      if (state.refusing) throw new Error('answered 500');
    },
  };
}

class Recorder implements WebhookDeliveryMetrics {
  outcomes: DeliveryOutcome[] = [];
  last: { retrying: number; paused: boolean } | undefined;
  ended = 0;
  delivery(outcome: DeliveryOutcome) {
    this.outcomes.push(outcome);
  }
  state(now: { retrying: number; paused: boolean }) {
    this.last = now;
  }
  end() {
    this.ended += 1;
  }
}

describe('webhook delivery metrics', () => {
  it('count each POST once by outcome, and report the waiting attempt and the endpoint taken for down', async () => {
    const events = [recordedEvent(1, 100)];
    const state = { refusing: true };
    const metrics = new Recorder();
    let now = T0 + 1_000;
    const d = new WebhookDispatcher('we_m', sourcesWith(events, state), initialCursor(T0), () => now, metrics);
    await d.step();
    expect(metrics.outcomes).toEqual(['refused']);
    expect(metrics.last).toEqual({ retrying: 1, paused: false });
    // Two more refusals in a row (the retries, after their backoff): taken for down.
    for (const wait of [1_100, 2_100]) {
      now += wait;
      await d.step();
    }
    expect(metrics.outcomes).toEqual(['refused', 'refused', 'refused']);
    expect(metrics.last).toEqual({ retrying: 1, paused: true });
    // Refused for 3 days: given up, counted as that (not as one more refusal); nothing waits any more.
    now += GIVE_UP_AFTER_MS + 3_600_000;
    await d.step();
    expect(metrics.outcomes.slice(3)).toEqual(['given_up']);
    expect(metrics.last?.retrying).toBe(0);
    // The endpoint answers again: a new event is delivered, and it is no longer taken for down.
    state.refusing = false;
    events.push(recordedEvent(2, now - T0));
    now += 1_000;
    await d.step();
    expect(metrics.outcomes.slice(4)).toEqual(['delivered']);
    expect(metrics.last).toEqual({ retrying: 0, paused: false });
  });

  it('are Prometheus series labelled by endpoint id: counters at zero from the start, gauges gone when the slice ends', async () => {
    const metric = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values.filter((v) => v.labels.endpoint === 'we_p') ?? [];
    const m = webhookDeliveryMetrics('we_p');
    expect((await metric('authcap_webhook_deliveries_total')).map((v) => [v.labels.outcome, v.value])).toEqual([
      ['delivered', 0],
      ['refused', 0],
      ['given_up', 0],
    ]);
    m.delivery('refused');
    m.state({ retrying: 2, paused: true });
    expect((await metric('authcap_webhook_retrying_attempts')).map((v) => v.value)).toEqual([2]);
    expect((await metric('authcap_webhook_endpoint_paused')).map((v) => v.value)).toEqual([1]);
    m.end();
    expect(await metric('authcap_webhook_retrying_attempts')).toEqual([]);
    expect(await metric('authcap_webhook_endpoint_paused')).toEqual([]);
    expect((await metric('authcap_webhook_deliveries_total')).find((v) => v.labels.outcome === 'refused')?.value).toBe(1);
    // The label is the endpoint's id; its URL (which may carry a token) is never exported.
    expect(await registry.metrics()).not.toContain(endpoint.url);
  });

  it('end with the slice, also when the endpoint was deleted', async () => {
    const metrics = new Recorder();
    const run = await dispatchForSlice('we_m', undefined, {
      sources: sourcesWith([recordedEvent(1, 100)], { refusing: false, deleted: true }),
      heartbeat: () => undefined,
      sleep: async () => undefined,
      log: () => undefined,
      metrics,
    });
    expect(run.endpointDeleted).toBe(true);
    expect(metrics.ended).toBe(1);
  });
});
