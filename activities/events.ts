// Events and webhook deliveries: plain async functions over what the worker gives them (its Temporal
// client, through small functions, so this file stays free of Temporal's client API).
import { ApplicationFailure } from '@temporalio/common';
import type { EventActivities } from '../domain/activityContract.js';
import { endpointWants, publicEvent, type WebhookEndpoint, type WebhookEndpointRecord } from '../domain/events.js';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from '../runtime/webhookSignature.js';

export interface EventDependencies {
  /** The registry's endpoints without secrets (from its memo: no worker needed). */
  listEndpoints(): Promise<WebhookEndpoint[]>;
  /** One endpoint with its secret, or undefined once it is deleted. */
  endpointRecord(id: string): Promise<WebhookEndpointRecord | undefined>;
  /** How long one delivery attempt may take. */
  deliveryTimeoutMs?: number;
}

const USER_AGENT = 'authcap-webhooks/1';

export function createEventActivities(deps: EventDependencies): EventActivities {
  return {
    async webhookSubscribers({ types }) {
      const endpoints = await deps.listEndpoints();
      return Object.fromEntries(types.map((type) => [type, endpoints.filter((e) => endpointWants(e, type)).map((e) => e.id)]));
    },

    async deliverWebhook({ endpointId, event }) {
      const endpoint = await deps.endpointRecord(endpointId);
      const at = () => new Date().toISOString();
      // Deleted since the event was recorded: nobody is listening there any more.
      if (!endpoint) return { endpointId, status: 'skipped', at: at() };
      // The body a receiver verifies is exactly these bytes.
      const body = JSON.stringify(publicEvent(event));
      let status: number;
      try {
        const answer = await fetch(endpoint.url, {
          method: 'POST',
          redirect: 'manual',
          headers: {
            'content-type': 'application/json',
            'user-agent': USER_AGENT,
            [SIGNATURE_HEADER]: signWebhook(body, endpoint.secret),
            [EVENT_ID_HEADER]: event.id,
          },
          body,
          signal: AbortSignal.timeout(deps.deliveryTimeoutMs ?? 10_000),
        });
        status = answer.status;
        await answer.body?.cancel().catch(() => undefined);
      } catch (err) {
        // Refused, reset or timed out: Temporal tries again later.
        throw ApplicationFailure.retryable(`${endpoint.url} did not answer: ${(err as Error).message}`, 'webhook_unreachable');
      }
      if (status < 200 || status > 299) {
        throw ApplicationFailure.retryable(`${endpoint.url} answered ${status}`, 'webhook_refused', { httpStatus: status });
      }
      return { endpointId, status: 'delivered', httpStatus: status, at: at() };
    },
  };
}
