// `webhookEndpoints.create`: registers an endpoint in the registry workflow
// (workflows/webhookEndpoints.ts) and starts its dispatcher. The signing secret is in this answer only.
import { randomBytes } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { WEBHOOK_ENDPOINTS_WORKFLOW_ID, WEBHOOK_ENDPOINTS_WORKFLOW_TYPE, type WebhookEndpointRecord } from '../../domain/events.js';
import type { Resolver, WebhookAddressPolicy } from '../../runtime/webhookAddressPolicy.js';
import { ensureWebhookDispatcher } from '../../runtime/webhookDispatchers.js';
import { newWebhookSecret } from '../../runtime/webhookSignature.js';
import { createWebhookEndpointUpdate, type webhookEndpointsWorkflow } from '../../workflows/webhookEndpoints.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { assertWebhookUrlAllowed, parseEndpointRequest, type CreatedWebhookEndpoint, type CreateWebhookEndpointRequest } from './endpointRequest.js';

export interface WebhookEndpointsContext {
  transport: TemporalTransport;
  /** Which addresses an endpoint may have (AUTHCAP_WEBHOOK_ALLOW_LOOPBACK / _PRIVATE, read by the process's entry). */
  addressPolicy: WebhookAddressPolicy;
  /** How a host name is resolved for that check. */
  resolve: Resolver;
}

export async function create(ctx: WebhookEndpointsContext, request: CreateWebhookEndpointRequest): Promise<CreatedWebhookEndpoint> {
  const { transport } = ctx;
  const parsed = parseEndpointRequest(request);
  // Before the registry sees it: a refused URL leaves nothing registered.
  await assertWebhookUrlAllowed(parsed.url, ctx.addressPolicy, ctx.resolve);
  const record: WebhookEndpointRecord = {
    id: `we_${randomBytes(12).toString('base64url')}`,
    ...parsed,
    createdAt: new Date().toISOString(),
    secret: newWebhookSecret(),
  };
  // The registry starts with its first endpoint: update-with-start, one round trip either way.
  const startWorkflowOperation = new WithStartWorkflowOperation<typeof webhookEndpointsWorkflow>(WEBHOOK_ENDPOINTS_WORKFLOW_TYPE, {
    workflowId: WEBHOOK_ENDPOINTS_WORKFLOW_ID,
    taskQueue: transport.taskQueue,
    args: [{ endpoints: [] }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  const endpoint = await transport.worker(() =>
    transport.workflow.executeUpdateWithStart(createWebhookEndpointUpdate, { args: [record], startWorkflowOperation }),
  );
  // Its dispatcher delivers what authorizations keep in their memos (it ends when the endpoint is deleted).
  await transport.server(() => ensureWebhookDispatcher(transport.temporal, transport.taskQueue, endpoint.id));
  return { ...endpoint, secret: record.secret };
}
