// `webhookEndpoints.list`: from the registry's memo, so it answers while every worker is down.
import { ENDPOINTS_MEMO_KEY, WEBHOOK_ENDPOINTS_WORKFLOW_ID, type WebhookEndpoint } from '../../domain/events.js';
import { sealedEntries } from '../../domain/sealed.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';

export async function list(transport: TemporalTransport): Promise<WebhookEndpoint[]> {
  const registry = await transport.describeIfExists(WEBHOOK_ENDPOINTS_WORKFLOW_ID);
  return (sealedEntries(registry?.memo)?.[ENDPOINTS_MEMO_KEY] as WebhookEndpoint[] | undefined) ?? [];
}
