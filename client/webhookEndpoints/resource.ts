// `client.webhookEndpoints`: one method per action, each in its own file beside this one. The HTTP
// API's handlers call these same methods.
import type { WebhookEndpoint } from '../../domain/events.js';
import { create, type WebhookEndpointsContext } from './create.js';
import { deleteEndpoint } from './delete.js';
import type { CreatedWebhookEndpoint, CreateWebhookEndpointRequest } from './endpointRequest.js';
import { get } from './get.js';
import { list } from './list.js';

export class WebhookEndpoints {
  constructor(private readonly ctx: WebhookEndpointsContext) {}

  /** Registers an endpoint; the answer carries its signing `secret`, shown this once only. */
  create(request: CreateWebhookEndpointRequest): Promise<CreatedWebhookEndpoint> {
    return create(this.ctx, request);
  }

  list(): Promise<WebhookEndpoint[]> {
    return list(this.ctx.transport);
  }

  get(id: string): Promise<WebhookEndpoint> {
    return get(this.ctx.transport, id);
  }

  delete(id: string): Promise<WebhookEndpoint> {
    return deleteEndpoint(this.ctx.transport, id);
  }
}
