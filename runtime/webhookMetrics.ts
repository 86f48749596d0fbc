// Webhook delivery metrics of the worker's dispatchers (activities/webhookDispatch.ts), labelled by
// endpoint id (never its URL: it may carry a token). A dispatcher runs as one activity slice at a time
// on whichever worker Temporal hands it to, so each slice sets its endpoint's gauges and removes them
// when it ends: the worker that runs the next slice reports them, and no other worker keeps a stale one.
import { Counter, Gauge } from 'prom-client';
import { registry } from './metrics.js';

export type DeliveryOutcome = 'delivered' | 'refused' | 'given_up';
const OUTCOMES: readonly DeliveryOutcome[] = ['delivered', 'refused', 'given_up'];

const deliveries = new Counter({
  name: 'authcap_webhook_deliveries_total',
  help: "Webhook delivery attempts by this worker's dispatchers, by endpoint id and outcome: delivered (2xx), refused (anything else; retried with backoff), given_up (refused after 3 days of retries: the event stays in the feed only).",
  labelNames: ['endpoint', 'outcome'] as const,
  registers: [registry],
});

const retrying = new Gauge({
  name: 'authcap_webhook_retrying_attempts',
  help: 'Authorizations or refunds whose next event the endpoint refused and that wait for a retry (their later events wait behind it), by endpoint id; set by the worker running its dispatcher.',
  labelNames: ['endpoint'] as const,
  registers: [registry],
});

const paused = new Gauge({
  name: 'authcap_webhook_endpoint_paused',
  help: 'Whether the dispatcher takes the endpoint to be down (1: it refused the last 3 or more deliveries in a row and nothing was accepted since; new events wait between backoff probes), by endpoint id.',
  labelNames: ['endpoint'] as const,
  registers: [registry],
});

/** What a dispatcher reports as it goes. */
export interface WebhookDeliveryMetrics {
  delivery(outcome: DeliveryOutcome): void;
  /** The dispatcher's state after a step. */
  state(now: { retrying: number; paused: boolean }): void;
  /** The slice ended (returned, failed or was cancelled): its gauges go. */
  end(): void;
}

/** One endpoint's metrics for one slice: its counters at zero from the start, so increase() sees the first. */
export function webhookDeliveryMetrics(endpoint: string): WebhookDeliveryMetrics {
  for (const outcome of OUTCOMES) deliveries.inc({ endpoint, outcome }, 0);
  return {
    delivery: (outcome) => deliveries.inc({ endpoint, outcome }),
    state(now) {
      retrying.set({ endpoint }, now.retrying);
      paused.set({ endpoint }, now.paused ? 1 : 0);
    },
    end() {
      retrying.remove({ endpoint });
      paused.remove({ endpoint });
    },
  };
}

/** For a dispatcher outside the worker (unit tests): reports nothing. */
export const noWebhookMetrics: WebhookDeliveryMetrics = { delivery() {}, state() {}, end() {} };
