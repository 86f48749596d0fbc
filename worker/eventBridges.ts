// What the event activities need from Temporal, built on the worker's own client.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { EventDependencies } from '../activities/events.js';
import { ENDPOINTS_MEMO_KEY, WEBHOOK_ENDPOINTS_WORKFLOW_ID, type WebhookEndpoint } from '../domain/events.js';
import { webhookEndpointRecordsQuery } from '../workflows/webhookEndpoints.js';
import { sealedEntries } from '../domain/sealed.js';

export function eventBridges(client: Client): EventDependencies {
  const registry = () => client.workflow.getHandle(WEBHOOK_ENDPOINTS_WORKFLOW_ID);
  return {
    async listEndpoints() {
      try {
        const description = await registry().describe();
        return (sealedEntries(description.memo)?.[ENDPOINTS_MEMO_KEY] as WebhookEndpoint[] | undefined) ?? [];
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
