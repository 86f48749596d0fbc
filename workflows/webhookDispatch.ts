// One dispatcher per webhook endpoint: it delivers the events of every authorization and refunds
// workflow (each keeps its events in its memo) to that endpoint, in order per attempt, retrying each refused event for 3 days. The work is one long-running activity at a time
// (activities/webhookDispatch.ts), which heartbeats its cursor and hands it back every few minutes;
// this workflow keeps it between them and ends when the endpoint is deleted. Authorizations' events
// cost it nothing per payment: no signal, no workflow task.
import { continueAsNew, proxyActivities, upsertMemo, workflowInfo } from '@temporalio/workflow';
import type { EventActivities } from '../domain/activityContract.js';
import type { DispatchCursor } from '../domain/webhookDispatch.js';
import { followTaskQueue } from '../domain/taskQueues.js';

const dispatch = () =>
  proxyActivities<EventActivities>({
    // Its own slots (domain/taskQueues.ts): a slice waits for minutes.
    taskQueue: followTaskQueue(workflowInfo().taskQueue),
    // A slice runs about 5 minutes (SLICE_MS); a worker that dies mid-slice is noticed by its heartbeat.
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '30 seconds',
    // It never gives up: an endpoint's events must reach it, or be given up one by one after 3 days.
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });

/** Slices per run before it continues as new: a short history whatever the endpoint's age. */
const SLICES_PER_RUN = 50;

export interface WebhookDispatchInput {
  endpointId: string;
  cursor?: DispatchCursor;
}

export async function webhookDispatchWorkflow(input: WebhookDispatchInput): Promise<void> {
  let cursor = input.cursor;
  for (let slice = 0; slice < SLICES_PER_RUN && !workflowInfo().continueAsNewSuggested; slice += 1) {
    const run = await dispatch().dispatchWebhooks({ endpointId: input.endpointId, cursor });
    cursor = run.cursor;
    // For operators in the Temporal UI: what reached the endpoint, what waits, what was given up.
    upsertMemo({
      dispatch: {
        delivered: cursor.totals.delivered,
        failed: cursor.totals.failed,
        retrying: Object.keys(cursor.retries).length,
        windowStart: cursor.windowStart,
      },
    });
    if (run.endpointDeleted) return;
  }
  await continueAsNew<typeof webhookDispatchWorkflow>({ endpointId: input.endpointId, cursor });
}
