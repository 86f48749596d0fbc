// What a webhook endpoint registration asks for, checked before the registry sees it: an http(s)
// URL authcap may call (not, or not now, resolving to an address it must not), and known event types.
import { AuthcapError } from '../../domain/errors.js';
import { eventTypes, type EventType, type WebhookEndpoint } from '../../domain/events.js';
import { checkDestination, systemResolver, type Resolver, type WebhookAddressPolicy } from '../../runtime/webhookAddressPolicy.js';

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
