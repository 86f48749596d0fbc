// `webhookEndpoints.delete`: removes an endpoint from the registry; its dispatcher then ends, and
// nothing recorded after the deletion is sent to it.
import type { WebhookEndpoint } from '../../domain/events.js';
import { WEBHOOK_ENDPOINTS_WORKFLOW_ID } from '../../domain/events.js';
import { deleteWebhookEndpointUpdate } from '../../workflows/webhookEndpoints.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { get } from './get.js';

/** Named for what it does: `delete` is a word of the language. */
export async function deleteEndpoint(transport: TemporalTransport, id: string): Promise<WebhookEndpoint> {
  await get(transport, id);
  const registry = transport.workflow.getHandle(WEBHOOK_ENDPOINTS_WORKFLOW_ID);
  return transport.worker(() => registry.executeUpdate(deleteWebhookEndpointUpdate, { args: [{ id }] }));
}
