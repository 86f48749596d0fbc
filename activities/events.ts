// Webhook deliveries: plain async functions over what the worker gives them (its Temporal
// client, through small functions, so this file stays free of Temporal's client API).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { dispatchForSlice, type DispatchCursor, type DispatchSources, type EventfulRun } from './webhookDispatch.js';
import type { EventActivities } from '../domain/activityContract.js';
import { publicEvent, type AuthcapEvent, type RecordedEvent, type WebhookEndpoint, type WebhookEndpointRecord } from '../domain/events.js';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from '../runtime/webhookSignature.js';
import {
  AddressNotAllowedError,
  bareHost,
  guardedLookup,
  refusalForAddress,
  systemResolver,
  type Resolver,
  type WebhookAddressPolicy,
} from '../runtime/webhookAddressPolicy.js';

export interface EventDependencies {
  /** The registry's endpoints without secrets (from its memo: no worker needed); the worker starts a dispatcher for each. */
  listEndpoints(): Promise<WebhookEndpoint[]>;
  /** One endpoint with its secret, or undefined once it is deleted. */
  endpointRecord(id: string): Promise<WebhookEndpointRecord | undefined>;
  /** The runs whose events moved at or after `since` (workflows that keep their events in their memo). */
  eventfulSince(since: Date): Promise<EventfulRun[]>;
  /** An attempt's events as its latest run holds them. */
  eventsOf(workflowId: string): Promise<RecordedEvent[]>;
  /** How long one delivery attempt may take. */
  deliveryTimeoutMs?: number;
  /** Which addresses a delivery may reach (the worker's AUTHCAP_WEBHOOK_ALLOW_* settings), asked at each attempt. */
  addressPolicy: () => WebhookAddressPolicy;
  /** Name resolution for deliveries (default: the system resolver, as a socket would use). */
  resolve?: Resolver;
}

const USER_AGENT = 'authcap-webhooks/1';

export function createEventActivities(deps: EventDependencies): EventActivities {
  return {
    async dispatchWebhooks({ endpointId, cursor }) {
      const context = Context.current();
      // The endpoint (with its secret, from the registry's query): the dispatcher decides how often
      // to read it again, and sends nothing recorded after its read (a deletion is never outrun).
      const sources: DispatchSources = {
        changedSince: (since) => deps.eventfulSince(since),
        eventsOf: (workflowId) => deps.eventsOf(workflowId),
        endpoint: (id) => deps.endpointRecord(id),
        deliver: async (endpoint, event) => void (await postWebhookEvent(endpoint, event, deps)),
      };
      return dispatchForSlice(endpointId, cursor, {
        sources,
        resumed: context.info.heartbeatDetails as DispatchCursor | undefined,
        heartbeat: (next) => context.heartbeat(next),
        sleep: (ms) => context.sleep(ms),
        log: (message) => context.log.warn(message),
      });
    },
  };
}

/**
 * One delivery attempt of one event to one endpoint: the signed POST, its answer's status when 2xx.
 * Anything else throws a retryable ApplicationFailure naming why (refused, unreachable, not allowed).
 */
export async function postWebhookEvent(
  endpoint: WebhookEndpointRecord,
  event: AuthcapEvent | RecordedEvent,
  deps: Pick<EventDependencies, 'addressPolicy' | 'resolve' | 'deliveryTimeoutMs'>,
): Promise<number> {
  // The body a receiver verifies is exactly these bytes.
  const body = JSON.stringify(publicEvent(event));
  const policy = deps.addressPolicy();
  const url = new URL(endpoint.url);
  // Registration checked it once; DNS and the policy may have changed since. Retryable: each
  // attempt re-checks.
  // A socket connects to an IP literal without a lookup, so the lookup hook never sees those.
  const host = bareHost(url);
  const refused = isIP(host) ? refusalForAddress(host, host, policy) : undefined;
  if (refused) throw notAllowed(endpoint.url, refused.message);
  let status: number;
  try {
    status = await post(
      url,
      body,
      {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        [SIGNATURE_HEADER]: signWebhook(body, endpoint.secret),
        [EVENT_ID_HEADER]: event.id,
      },
      policy,
      deps.resolve ?? systemResolver,
      deps.deliveryTimeoutMs ?? 10_000,
    );
  } catch (err) {
    if (err instanceof AddressNotAllowedError) throw notAllowed(endpoint.url, err.message);
    // Refused, reset or timed out: tried again later.
    throw ApplicationFailure.retryable(`${endpoint.url} did not answer: ${(err as Error).message}`, 'webhook_unreachable');
  }
  if (status < 200 || status > 299) {
    // A redirect is never followed: its target was not registered, nor checked.
    const why = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
    throw ApplicationFailure.retryable(`${endpoint.url} answered ${status}${why}`, 'webhook_refused', { httpStatus: status });
  }
  return status;
}

function notAllowed(url: string, why: string): ApplicationFailure {
  return ApplicationFailure.retryable(`${url} is not allowed: ${why}`, 'webhook_address_not_allowed');
}

/**
 * Kept-alive connections for deliveries, one pool per address policy and resolver: every socket in a
 * pool was opened through the guarded lookup of that policy, so reusing one sends nothing to an
 * address the policy did not check, and no other code shares them. An endpoint then costs one TCP
 * (and TLS) handshake per burst of events rather than one per event. Idle sockets close after
 * IDLE_SOCKET_MS, sooner than common servers' keep-alive, or when the server's Keep-Alive hint says.
 */
const IDLE_SOCKET_MS = 4_000;
const pools = new WeakMap<WebhookAddressPolicy, WeakMap<Resolver, { http: HttpAgent; https: HttpsAgent }>>();

function poolFor(policy: WebhookAddressPolicy, resolve: Resolver): { http: HttpAgent; https: HttpsAgent } {
  let byResolver = pools.get(policy);
  if (!byResolver) pools.set(policy, (byResolver = new WeakMap()));
  let pool = byResolver.get(resolve);
  if (!pool) {
    const options = { keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' as const };
    pool = { http: new HttpAgent(options), https: new HttpsAgent(options) };
    byResolver.set(resolve, pool);
  }
  return pool;
}

/**
 * One POST on node:http/https rather than fetch: the socket connects only to addresses the guarded
 * lookup checked, its connection is shared with no other code, and nothing follows redirects.
 */
function post(url: URL, body: string, headers: Record<string, string>, policy: WebhookAddressPolicy, resolve: Resolver, timeoutMs: number): Promise<number> {
  const https = url.protocol === 'https:';
  const pool = poolFor(policy, resolve);
  const signal = AbortSignal.timeout(timeoutMs);
  const attempt = (firstTry: boolean) =>
    new Promise<number>((resolvePromise, reject) => {
      const options = {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: guardedLookup(policy, resolve),
        signal,
      };
      const answered = (res: IncomingMessage) => {
        // Only the status matters; the answer's body is read and dropped so the socket is free again.
        res.resume();
        res.on('error', () => undefined);
        resolvePromise(res.statusCode ?? 0);
      };
      const req = https ? httpsRequest(url, { ...options, agent: pool.https }, answered) : httpRequest(url, { ...options, agent: pool.http }, answered);
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed as we wrote: once more on a fresh one (an event may
        // arrive twice in any case; receivers tell repeats by its id).
        if (firstTry && req.reusedSocket && err.code === 'ECONNRESET') attempt(false).then(resolvePromise, reject);
        else reject(err);
      });
      req.end(body);
    });
  return attempt(true);
}
