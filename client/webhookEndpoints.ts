// Webhook endpoints for order services: register one (its signing secret is shown once), list,
// read and delete them. They live in the registry workflow (workflows/webhookEndpoints.ts).
import { randomBytes } from 'node:crypto';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { AuthcapError } from '../domain/errors.js';
import {
  ENDPOINTS_MEMO_KEY,
  WEBHOOK_ENDPOINTS_WORKFLOW_ID,
  WEBHOOK_ENDPOINTS_WORKFLOW_TYPE,
  eventTypes,
  type EventType,
  type WebhookEndpoint,
  type WebhookEndpointRecord,
} from '../domain/events.js';
import { newWebhookSecret } from '../runtime/webhookSignature.js';
import { checkDestination, systemResolver, webhookAddressPolicyFromEnv, type Resolver, type WebhookAddressPolicy } from '../runtime/webhookAddressPolicy.js';
import { createWebhookEndpointUpdate, deleteWebhookEndpointUpdate, type webhookEndpointsWorkflow } from '../workflows/webhookEndpoints.js';
import { serverCall, workerCall } from './temporalCalls.js';
import { sealedEntries } from '../domain/sealed.js';
import { ensureWebhookDispatcher } from '../runtime/webhookDispatchers.js';

export interface CreateWebhookEndpointRequest {
  /** http(s) URL that receives POSTed events. */
  url: string;
  /** Event types to receive, or `['*']` for all. */
  events: string[];
  description?: string;
}

/** The endpoint with its signing secret: returned by create only, never again. */
export interface CreatedWebhookEndpoint extends WebhookEndpoint {
  secret: string;
}

export function parseEndpointRequest(request: CreateWebhookEndpointRequest): Omit<WebhookEndpoint, 'id' | 'createdAt'> {
  let url: URL;
  try {
    url = new URL(String(request?.url));
  } catch {
    throw new AuthcapError('validation_error', 'url must be an absolute http or https URL');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || String(request.url).length > 2048 || url.username || url.password) {
    throw new AuthcapError('validation_error', 'url must be an http or https URL of at most 2048 characters, without credentials');
  }
  const events = request?.events;
  if (!Array.isArray(events) || events.length === 0 || events.length > eventTypes.length) {
    throw new AuthcapError('validation_error', `events must list event types (${eventTypes.join(', ')}) or be ["*"]`);
  }
  for (const type of events) {
    if (type !== '*' && !(eventTypes as readonly string[]).includes(type)) {
      throw new AuthcapError('validation_error', `events: unknown event type ${JSON.stringify(type)}; known: ${eventTypes.join(', ')}, or *`);
    }
  }
  const description = request.description === undefined ? null : String(request.description).trim().slice(0, 200) || null;
  return { url: url.toString(), events: [...new Set(events)] as (EventType | '*')[], description };
}

/**
 * Refuses a URL whose host is, or now resolves to, an address authcap must not call (422
 * webhook_url_not_allowed, naming why). Deliveries check again at each attempt: DNS may change.
 */
export async function assertWebhookUrlAllowed(url: string, policy: WebhookAddressPolicy, resolve: Resolver = systemResolver): Promise<void> {
  const refused = await checkDestination(new URL(url), policy, resolve);
  if (refused) {
    throw new AuthcapError('webhook_url_not_allowed', `url is not allowed: ${refused.message}`, {
      host: refused.host,
      ...(refused.address ? { address: refused.address } : {}),
      reason: refused.kind,
    });
  }
}

export class WebhookEndpoints {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
    private readonly ping: () => Promise<unknown>,
    private readonly policy: () => WebhookAddressPolicy = () => webhookAddressPolicyFromEnv(),
    private readonly resolve: Resolver = systemResolver,
  ) {}

  async create(request: CreateWebhookEndpointRequest): Promise<CreatedWebhookEndpoint> {
    const parsed = parseEndpointRequest(request);
    // Before the registry sees it: a refused URL leaves nothing registered.
    await assertWebhookUrlAllowed(parsed.url, this.policy(), this.resolve);
    const record: WebhookEndpointRecord = {
      id: `we_${randomBytes(12).toString('base64url')}`,
      ...parsed,
      createdAt: new Date().toISOString(),
      secret: newWebhookSecret(),
    };
    // The registry starts with its first endpoint: update-with-start, one round trip either way.
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof webhookEndpointsWorkflow>(WEBHOOK_ENDPOINTS_WORKFLOW_TYPE, {
      workflowId: WEBHOOK_ENDPOINTS_WORKFLOW_ID,
      taskQueue: this.taskQueue,
      args: [{ endpoints: [] }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    const endpoint = await workerCall(this.temporal, this.ping, () =>
      this.temporal.workflow.executeUpdateWithStart(createWebhookEndpointUpdate, { args: [record], startWorkflowOperation }),
    );
    // Its dispatcher delivers what authorizations keep in their memos (it ends when the endpoint is deleted).
    await serverCall(this.temporal, () => ensureWebhookDispatcher(this.temporal, this.taskQueue, endpoint.id));
    return { ...endpoint, secret: record.secret };
  }

  /** From the registry's memo: answers while every worker is down. */
  async list(): Promise<WebhookEndpoint[]> {
    try {
      const description = await serverCall(this.temporal, () => this.temporal.workflow.getHandle(WEBHOOK_ENDPOINTS_WORKFLOW_ID).describe());
      return (sealedEntries(description.memo)?.[ENDPOINTS_MEMO_KEY] as WebhookEndpoint[] | undefined) ?? [];
    } catch (err) {
      if (err instanceof AuthcapError && err.code === 'not_found') return [];
      throw err;
    }
  }

  async get(id: string): Promise<WebhookEndpoint> {
    const found = (await this.list()).find((e) => e.id === id);
    if (!found) throw new AuthcapError('not_found', `no webhook endpoint ${id}`);
    return found;
  }

  async delete(id: string): Promise<WebhookEndpoint> {
    await this.get(id);
    const handle = this.temporal.workflow.getHandle(WEBHOOK_ENDPOINTS_WORKFLOW_ID);
    return workerCall(this.temporal, this.ping, () => handle.executeUpdate(deleteWebhookEndpointUpdate, { args: [{ id }] }));
  }
}
