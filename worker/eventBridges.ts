// What the event activities need from Temporal, built on the worker's own client.
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { EventDependencies } from '../activities/events.js';
import {
  ENDPOINTS_MEMO_KEY, EVENT_STREAM_WORKFLOW_TYPE, WEBHOOK_ENDPOINTS_WORKFLOW_ID, eventStreamWorkflowId, type AuthcapEvent, type WebhookEndpoint,
} from '../domain/events.js';
import { OrderIdAttribute } from '../domain/searchAttributes.js';
import { eventsSignal, type EventStreamInput } from '../workflows/eventStream.js';
import { webhookEndpointRecordsQuery } from '../workflows/webhookEndpoints.js';

export function eventBridges(client: Client, taskQueue: string): EventDependencies {
  const registry = () => client.workflow.getHandle(WEBHOOK_ENDPOINTS_WORKFLOW_ID);
  return {
    async sendToStream({ firstRunId, orderId, events }) {
      try {
        await client.workflow.signalWithStart<(input: EventStreamInput) => Promise<unknown>, [AuthcapEvent[]]>(EVENT_STREAM_WORKFLOW_TYPE, {
          workflowId: eventStreamWorkflowId(firstRunId),
          taskQueue,
          args: [{ orderId, firstRunId }],
          signal: eventsSignal,
          signalArgs: [events],
          // A stream ends only after its final event: one that has ended already holds every event,
          // and must not be started again by a late, repeated hand-over.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          typedSearchAttributes: [{ key: OrderIdAttribute, value: orderId }],
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    },

    async listEndpoints() {
      try {
        const description = await registry().describe();
        return (description.memo?.[ENDPOINTS_MEMO_KEY] as WebhookEndpoint[] | undefined) ?? [];
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return [];
        throw err;
      }
    },

    async endpointRecord(id) {
      try {
        const records = await registry().query(webhookEndpointRecordsQuery);
        return records.find((r) => r.id === id);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return undefined;
        throw err;
      }
    },
  };
}

