// A small JSON router on node:http, in the order a request must be judged: the target parsed once,
// the route it names, the key (every route not marked public), the rate limit (per key, or per
// client address on public routes), the role, the media type and size, the body by schema,
// idempotency, then the handler. Nothing reaches Temporal before all that.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AuthcapError, httpStatusFor } from '../domain/errors.js';
import type { ApiRole, Caller } from '../client/apiKeys.js';
import { fingerprintOf, type IdempotencyStore } from './idempotency.js';
import type { RateLimiter } from './rateLimit.js';
import { createLogger } from '../runtime/logger.js';
import { parseRequestTarget, type RequestTarget } from './requestTarget.js';

const logger = createLogger('authcap-api');

export interface JsonResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface RouteContext {
  params: Record<string, string>;
  body: unknown;
  target: RequestTarget;
  caller: Caller | undefined;
  /** The caller's Idempotency-Key, scoped to its API key (`<key id>:<key>`), when it sent one. */
  idempotencyKey?: string;
}

export type RouteHandler = (context: RouteContext) => Promise<JsonResponse>;

interface Route {
  method: string;
  segments: string[];
  roles: readonly ApiRole[] | 'public';
  handler: RouteHandler;
  /** Raw text answers (metrics) skip JSON encoding. */
  raw?: boolean;
  /** Never rate limited: liveness and readiness probes must not be throttled into a restart. */
  unlimited?: boolean;
}

export interface RouteOptions {
  unlimited?: boolean;
}

export interface RouterOptions {
  authenticate: (presented: string | undefined) => Caller | undefined;
  rateLimiter?: RateLimiter;
  /** Public routes have no key to count against: they are limited per client address. */
  publicRateLimiter?: RateLimiter;
  idempotency?: IdempotencyStore;
  onResponse?: (route: string, status: number, ms: number) => void;
}

const MAX_BODY_BYTES = 16 * 1024;
const IDEMPOTENCY_KEY = /^[\x21-\x7E]{1,255}$/;
/** nginx's "client closed request": counted apart from our own failures (5xx) and the caller's mistakes (4xx). */
export const CLIENT_CLOSED_REQUEST = 499;

/** The request body stopped arriving because the client went away. */
class ClientClosedRequest extends Error {
  override readonly name = 'ClientClosedRequest';
}

export class Router {
  private readonly routes: Route[] = [];

  constructor(private readonly options: RouterOptions) {}

  on(method: string, path: string, roles: readonly ApiRole[] | 'public', handler: RouteHandler, options: RouteOptions = {}): this {
    this.routes.push({ method, segments: path.split('/').slice(1), roles, handler, unlimited: options.unlimited });
    return this;
  }

  /** Every route, for the OpenAPI document. */
  list(): { method: string; path: string; roles: readonly ApiRole[] | 'public' }[] {
    return this.routes.map((r) => ({ method: r.method, path: `/${r.segments.join('/')}`, roles: r.roles }));
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    let response: JsonResponse;
    // Set by dispatch as soon as a route matches, so an error thrown after that is counted under it.
    const matched = { route: 'unmatched' };
    try {
      response = await this.dispatch(req, matched);
    } catch (err) {
      if (err instanceof ClientClosedRequest) {
        // The caller hung up mid-body: nothing of ours failed and nobody is left to answer.
        logger.info({ route: matched.route, method: req.method }, 'client closed the request before its body was read');
        this.options.onResponse?.(matched.route, CLIENT_CLOSED_REQUEST, Date.now() - started);
        res.destroy();
        return;
      }
      response = errorResponse(err);
    }
    this.options.onResponse?.(matched.route, response.status, Date.now() - started);
    const isText = typeof response.body === 'string' && response.headers?.['content-type'];
    const etag = response.headers?.etag;
    // A cached asset (checkout script, style) that did not change: headers only.
    const notModified = response.status === 200 && etag !== undefined && req.headers['if-none-match'] === etag;
    const payload = notModified ? '' : isText ? (response.body as string) : JSON.stringify(response.body);
    res.writeHead(notModified ? 304 : response.status, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      ...response.headers,
      'content-length': Buffer.byteLength(payload),
    });
    res.end(payload);
  }

  private async dispatch(req: IncomingMessage, matched: { route: string }): Promise<JsonResponse> {
    const method = req.method ?? 'GET';
    // The target is parsed once, strictly, and public-ness comes from the route it matches: a
    // spelling the parser refuses (`/./`, `%2e`, `..`, absolute-form) never reaches a public route.
    let target: RequestTarget | undefined;
    let refusal: unknown;
    try {
      target = parseRequestTarget(req.url);
    } catch (err) {
      refusal = err;
    }
    const candidates = target ? this.match(target) : [];
    const found = candidates.find((m) => m.route.method === method);
    const isPublic = found?.route.roles === 'public';
    const caller = isPublic ? undefined : this.options.authenticate(bearer(req.headers.authorization));
    // Without a key, anything but a public route is 401 first, malformed and unknown targets
    // included: nothing about routes or resources is told to an anonymous caller.
    if (!isPublic && !caller) throw new AuthcapError('unauthorized', 'missing or unknown API key: send Authorization: Bearer <key>');
    if (!target) throw refusal;
    const limiter = caller ? this.options.rateLimiter : found?.route.unlimited ? undefined : this.options.publicRateLimiter;
    if (limiter) {
      const allowed = limiter.take(caller ? caller.id : `ip:${req.socket.remoteAddress ?? 'unknown'}`);
      if (!allowed.ok) {
        const whom = caller ? 'this API key' : 'this address';
        throw new AuthcapError('rate_limited', `too many requests for ${whom}; retry in ${allowed.retryAfterSeconds} s`, {
          retryAfterSeconds: allowed.retryAfterSeconds,
        });
      }
    }
    if (candidates.length === 0) throw new AuthcapError('not_found', `no route for ${target.path}`);
    if (!found) throw new AuthcapError('method_not_allowed', `${method} is not allowed on ${target.path}`);
    const { route, params } = found;
    matched.route = `${route.method} /${route.segments.join('/')}`;
    if (route.roles !== 'public' && (!caller || !route.roles.includes(caller.role))) {
      throw new AuthcapError('forbidden', `an ${caller?.role ?? 'anonymous'} key may not ${route.method} ${target.path}`);
    }
    // GET and DELETE name their resource in the path: a body is neither needed nor read.
    const body = method === 'GET' || method === 'DELETE' ? undefined : await readJson(req);
    const idempotencyKey = header(req, 'idempotency-key');
    const context: RouteContext = {
      params,
      body,
      target,
      caller,
      ...(idempotencyKey !== undefined && caller ? { idempotencyKey: `${caller.id}:${idempotencyKey}` } : {}),
    };
    // Public routes keep no answers: an anonymous key space would let one caller pre-empt another's
    // key, and what they do (sign a draft, cancel) is refused the second time by the workflow anyway.
    if (method !== 'POST' || idempotencyKey === undefined || !this.options.idempotency || !caller) {
      return route.handler(context);
    }
    if (!IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new AuthcapError('validation_error', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
    }
    const claim = await this.options.idempotency.claim(caller.id, idempotencyKey, fingerprintOf(method, target.path, body));
    if (claim.kind === 'replay') return { ...claim.response, headers: { 'idempotent-replayed': 'true' } };
    if (claim.kind === 'reused') throw new AuthcapError('idempotency_key_reused', 'this Idempotency-Key was used with a different request');
    if (claim.kind === 'in_progress')
      throw new AuthcapError('idempotency_key_in_use', 'a request with this Idempotency-Key is still being processed; retry shortly');
    let response: JsonResponse;
    try {
      response = await route.handler(context);
    } catch (err) {
      response = errorResponse(err);
    }
    // An outage, a throttle or "still working on it" (202) is not a final answer: the caller must be
    // able to retry with the same key and get the outcome.
    const final = !(response.status >= 500 || response.status === 429 || response.status === 202);
    try {
      if (final) await claim.complete({ status: response.status, body: response.body });
      else await claim.release();
    } catch (err) {
      // What was done is done: the caller still gets its answer. A retry meets the claim left
      // pending (409 idempotency_key_in_use) until it goes stale, then runs again.
      logger.error({ err, route: matched.route }, `the Idempotency-Key answer could not be ${final ? 'kept' : 'released'}`);
    }
    return response;
  }

  /** The routes whose pattern fits the path, any method. */
  private match(target: RequestTarget): { route: Route; params: Record<string, string> }[] {
    const found: { route: Route; params: Record<string, string> }[] = [];
    for (const route of this.routes) {
      const params = match(route.segments, target.segments);
      if (params) found.push({ route, params });
    }
    return found;
  }
}

function bearer(authorization: string | undefined): string | undefined {
  const match = /^Bearer ([\x21-\x7E]{1,512})$/.exec(authorization ?? '');
  return match?.[1];
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function match(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, part] of pattern.entries()) {
    if (part.startsWith(':')) params[part.slice(1)] = segments[i]!;
    else if (part !== segments[i]) return undefined;
  }
  return params;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const contentType = req.headers['content-type'];
  // No body at all needs no media type (`POST …/capture` with nothing, as Stripe allows): it is `{}`.
  // A browser could send that cross-origin, but not with our Authorization header, and the public
  // checkout routes need a signature in the body. A body of any length still needs application/json.
  const noBody = req.headers['transfer-encoding'] === undefined && (req.headers['content-length'] ?? '0') === '0';
  if ((contentType === undefined || contentType.trim() === '') && noBody) return {};
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  // Only JSON: a browser page cannot send it cross-origin without a CORS preflight.
  if (type !== 'application/json') {
    throw new AuthcapError('unsupported_media_type', 'send the body as application/json (Content-Type: application/json)');
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) throw new AuthcapError('payload_too_large', `request body is larger than ${MAX_BODY_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) throw new AuthcapError('payload_too_large', `request body is larger than ${MAX_BODY_BYTES} bytes`);
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof AuthcapError) throw err;
    // Node ends the body with "aborted" (ECONNRESET) when the socket closes before Content-Length is met.
    if (req.destroyed || (err as NodeJS.ErrnoException).code === 'ECONNRESET') throw new ClientClosedRequest((err as Error).message);
    throw err;
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new AuthcapError('validation_error', 'request body is not valid JSON');
  }
}

export function errorResponse(err: unknown): JsonResponse {
  const error = err instanceof AuthcapError ? err : new AuthcapError('internal_error', 'internal error');
  if (!(err instanceof AuthcapError)) logger.error({ err }, 'unexpected error');
  const status = httpStatusFor(error.code);
  const headers: Record<string, string> = {};
  if (status === 503) headers['retry-after'] = '2';
  if (status === 429) headers['retry-after'] = String(error.details?.retryAfterSeconds ?? 1);
  return { status, body: { error: error.toJSON() }, headers };
}
