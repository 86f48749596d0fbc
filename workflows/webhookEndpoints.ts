// The webhook endpoints of this namespace, kept by one long-lived workflow: Temporal is authcap's
// only store, the API and every worker see the same list, and the signing secrets travel and rest
// sealed by the payload codec like every other payload. The memo carries the list without secrets,
// so reading it needs no worker.
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { ENDPOINTS_MEMO_KEY, MAX_WEBHOOK_ENDPOINTS, type WebhookEndpoint, type WebhookEndpointRecord } from '../domain/events.js';

export const createWebhookEndpointUpdate = defineUpdate<WebhookEndpoint, [WebhookEndpointRecord]>('createWebhookEndpoint');
export const deleteWebhookEndpointUpdate = defineUpdate<WebhookEndpoint, [{ id: string }]>('deleteWebhookEndpoint');
/** With secrets: for the worker's delivery activity only. */
export const webhookEndpointRecordsQuery = defineQuery<WebhookEndpointRecord[]>('webhookEndpointRecords');

const publicView = ({ secret: _secret, ...endpoint }: WebhookEndpointRecord): WebhookEndpoint => endpoint;

export async function webhookEndpointsWorkflow(input: { endpoints: WebhookEndpointRecord[] }): Promise<void> {
  const endpoints = [...input.endpoints];
  const publish = () => upsertMemo({ [ENDPOINTS_MEMO_KEY]: endpoints.map(publicView) });
  publish();

  setHandler(webhookEndpointRecordsQuery, () => endpoints);
  setHandler(
    createWebhookEndpointUpdate,
    (record) => {
      endpoints.push(record);
      publish();
      return publicView(record);
    },
    {
      validator: (record) => {
        if (endpoints.length >= MAX_WEBHOOK_ENDPOINTS) {
          throw ApplicationFailure.create({
            type: 'invalid_state',
            nonRetryable: true,
            message: `at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one first`,
          });
        }
        if (endpoints.some((e) => e.id === record.id)) {
          throw ApplicationFailure.create({ type: 'invalid_state', nonRetryable: true, message: `endpoint ${record.id} exists already` });
        }
      },
    },
  );
  setHandler(
    deleteWebhookEndpointUpdate,
    ({ id }) => {
      const at = endpoints.findIndex((e) => e.id === id);
      const [removed] = endpoints.splice(at, 1);
      publish();
      return publicView(removed!);
    },
    {
      validator: ({ id }) => {
        if (!endpoints.some((e) => e.id === id))
          throw ApplicationFailure.create({ type: 'not_found', nonRetryable: true, message: `no webhook endpoint ${id}` });
      },
    },
  );

  // It lives for ever: roll over before its history grows long, carrying the list.
  await condition(() => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2_000);
  await condition(allHandlersFinished);
  await continueAsNew<typeof webhookEndpointsWorkflow>({ endpoints });
}
