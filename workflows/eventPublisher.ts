// Hands an authorization's events to its event stream (workflows/eventStream.ts), in order, from
// inside the authorization's own workflow. The events are numbered in workflow state, so a replay or
// a crashed worker re-sends the same ids and the stream keeps each once; the hand-over is a local
// activity (one signal-with-start), so it costs the authorization no extra workflow task.
import { condition, patched, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { EventActivities } from '../domain/activityContract.js';
import type { Lifecycle } from './lifecycle.js';

/** Patch id: histories recorded before authorizations emitted events. */
export const EVENTS_PATCH = 'authorizations-emit-events';

const publisher = proxyLocalActivities<EventActivities>({
  startToCloseTimeout: '10 seconds',
  // Temporal itself unreachable from the worker: keep trying (on timers in history past a few seconds),
  // never drop an event.
  localRetryThreshold: '5 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '30 seconds' },
});

export interface EventPublisher {
  /** True when every event recorded so far is with the stream (wait on it with condition). */
  isDrained(): boolean;
}

export function startEventPublisher(lifecycle: Lifecycle): EventPublisher {
  lifecycle.recordEvents = patched(EVENTS_PATCH);
  let sending = false;
  if (lifecycle.recordEvents) {
    void (async () => {
      for (;;) {
        await condition(() => lifecycle.outbox.length > 0);
        sending = true;
        const batch = lifecycle.outbox.slice();
        await publisher.publishEvents({ firstRunId: workflowInfo().firstExecutionRunId, orderId: lifecycle.context.orderId, events: batch });
        lifecycle.outbox.splice(0, batch.length);
        sending = false;
      }
    })();
  }
  return { isDrained: () => lifecycle.outbox.length === 0 && !sending };
}
