// `webhookEndpoints.get`: one endpoint, from the registry's memo.
import { AuthcapError } from '../../domain/errors.js';
import type { WebhookEndpoint } from '../../domain/events.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { list } from './list.js';

export async function get(transport: TemporalTransport, id: string): Promise<WebhookEndpoint> {
  const found = (await list(transport)).find((e) => e.id === id);
  if (!found) throw new AuthcapError('not_found', `no webhook endpoint ${id}`);
  return found;
}
