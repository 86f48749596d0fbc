// Hands an authorization's events to its event stream (workflows/eventStream.ts), in order, from
// inside the authorization's own workflow. The events are numbered in workflow state, so a replay or
// a crashed worker names them the same way and the stream keeps each id once. The hand-over is done
// by Temporal itself: the attempt's first batch starts the stream as an abandoned child, later ones
// signal it. Both are commands, so the business commands of the same workflow task (an update's
// answer, the next capture step) never wait for it.
import { getExternalWorkflowHandle, log, ParentClosePolicy, patched, condition, startChild, workflowInfo } from '@temporalio/workflow';
import { eventStreamWorkflowId, type AuthcapEvent } from '../domain/events.js';
import { OrderIdAttribute } from '../domain/searchAttributes.js';
import { authorizationEventsWorkflow, eventsSignal } from './eventStream.js';
import type { Lifecycle } from './lifecycle.js';

/** Patch id: histories recorded before authorizations emitted events. */
export const EVENTS_PATCH = 'authorizations-emit-events';

export interface EventPublisher {
  /** True when every event recorded so far is with the stream (wait on it with condition). */
  isDrained(): boolean;
}

export function startEventPublisher(lifecycle: Lifecycle): EventPublisher {
  lifecycle.recordEvents = patched(EVENTS_PATCH);
  if (!lifecycle.recordEvents) return { isDrained: () => lifecycle.outbox.length === 0 };
  return startOutboxPublisher(lifecycle.outbox, lifecycle.context.orderId);
}

/**
 * Hands what is put in `outbox` to this workflow's event stream (`events-<its first run id>`), in
 * order, one batch at a time. Any workflow that emits events uses it (the refunds workflow too).
 */
export function startOutboxPublisher(outbox: AuthcapEvent[], orderId: string): EventPublisher {
  let sending = false;
  const info = workflowInfo();
  const stream = { orderId, firstRunId: info.firstExecutionRunId };
  // A continued run's stream was started by an earlier run (one that emitted events, at least).
  let started = info.continuedFromExecutionRunId !== undefined;
  void (async () => {
    for (;;) {
      await condition(() => outbox.length > 0);
      sending = true;
      const batch = outbox.slice();
      started = await handOver(stream, batch, started);
      outbox.splice(0, batch.length);
      sending = false;
    }
  })();
  return { isDrained: () => outbox.length === 0 && !sending };
}

type Stream = { orderId: string; firstRunId: string };

/** @returns whether the stream now exists. */
async function handOver(stream: Stream, batch: AuthcapEvent[], started: boolean): Promise<boolean> {
  const workflowId = eventStreamWorkflowId(stream.firstRunId);
  if (started) {
    try {
      await getExternalWorkflowHandle(workflowId).signal(eventsSignal, batch);
      return true;
    } catch (err) {
      // Not there: an attempt that began before events existed and continued as new since.
      log.info('event stream not found; starting it', { workflowId, error: (err as Error).message });
    }
  }
  try {
    await startChild(authorizationEventsWorkflow, {
      workflowId,
      args: [{ ...stream, initial: batch }],
      // The stream outlives the authorization's runs: it delivers for up to 3 days after the last event.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [{ key: OrderIdAttribute, value: stream.orderId }],
    });
  } catch (err) {
    // Only a stream that exists, or has ended with every event, refuses the start: nothing is lost.
    log.warn('event stream not started', { workflowId, error: (err as Error).message });
  }
  return true;
}
