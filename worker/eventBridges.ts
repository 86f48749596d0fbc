// What the event activities need from Temporal, built on the worker's own client (the address policy
// is the worker's settings', added by createWorker.ts).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
import type { temporal } from '@temporalio/proto';
import type { EventDependencies } from '../activities/events.js';
import type { EventfulRun } from '../activities/webhookDispatch.js';
import { REFUNDS_WORKFLOW_TYPE } from '../domain/refunds.js';
import { EventsKeyAttribute, EventsUpdatedAtAttribute } from '../domain/searchAttributes.js';
import { WORKFLOW_TYPE } from '../workflows/messages.js';
import { ENDPOINTS_MEMO_KEY, WEBHOOK_ENDPOINTS_WORKFLOW_ID, eventsFromMemo, isEventMemoKey, type WebhookEndpoint } from '../domain/events.js';
import { webhookEndpointRecordsQuery } from '../workflows/webhookEndpoints.js';
import { sealedEntries } from '../domain/sealed.js';

export function eventBridges(client: Client): Omit<EventDependencies, 'addressPolicy'> {
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

    async eventfulSince(since) {
      const runs: EventfulRun[] = [];
      const converter = client.workflow.options.loadedDataConverter;
      // The workflows that keep their events in their memo stamp EventsUpdatedAt with them.
      const query = `WorkflowType IN ('${WORKFLOW_TYPE}', '${REFUNDS_WORKFLOW_TYPE}') AND ${EventsUpdatedAtAttribute.name} >= '${since.toISOString()}'`;
      let nextPageToken: Uint8Array | undefined;
      do {
        const page = await client.workflowService.listWorkflowExecutions({ namespace: client.options.namespace, query, pageSize: 1000, nextPageToken });
        for (const execution of page.executions ?? []) {
          const fields = execution.searchAttributes?.indexedFields ?? {};
          const key = plainAttribute(fields[EventsKeyAttribute.name]);
          const updatedAt = plainAttribute(fields[EventsUpdatedAtAttribute.name]);
          if (!key || !updatedAt || !execution.execution?.workflowId || !execution.execution.runId) continue;
          runs.push({
            key,
            workflowId: execution.execution.workflowId,
            runId: execution.execution.runId,
            updatedAt: new Date(updatedAt).toISOString(),
            // Decrypted only for runs whose stamp moved: only what authcap sealed counts.
            events: async () => {
              const fields = Object.fromEntries(Object.entries(execution.memo?.fields ?? {}).filter(([name]) => isEventMemoKey(name)));
              return eventsFromMemo(sealedEntries(await decodeMapFromPayloads(converter, fields as never)));
            },
          });
        }
        nextPageToken = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
      } while (nextPageToken);
      return runs;
    },

    async eventsOf(workflowId) {
      try {
        return eventsFromMemo(sealedEntries((await client.workflow.getHandle(workflowId).describe()).memo));
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

/** A search attribute's value as visibility lists it (plain JSON: search attributes are never encrypted). */
function plainAttribute(payload: temporal.api.common.v1.IPayload | null | undefined): string | undefined {
  if (!payload) return undefined;
  const value = defaultPayloadConverter.fromPayload<unknown>(payload as never);
  return typeof value === 'string' ? value : undefined;
}
