// A tiny JSON router on node:http: enough for a handful of routes, no framework to keep current.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AuthcapError, httpStatusFor } from '../../domain/errors.js';

export interface JsonResponse {
  status: number;
  body: unknown;
}

export type RouteHandler = (params: Record<string, string>, body: unknown, url: URL) => Promise<JsonResponse>;

interface Route {
  method: string;
  pattern: RegExp;
  keys: string[];
  handler: RouteHandler;
}

const MAX_BODY_BYTES = 64 * 1024;

export class Router {
  private readonly routes: Route[] = [];

  on(method: string, path: string, handler: RouteHandler): this {
    const keys: string[] = [];
    const pattern = new RegExp(
      `^${path.replace(/:([a-zA-Z]+)/g, (_, key: string) => {
        keys.push(key);
        return '([^/]+)';
      })}/?$`,
    );
    this.routes.push({ method, pattern, keys, handler });
    return this;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let response: JsonResponse;
    try {
      response = await this.dispatch(req);
    } catch (err) {
      response = errorResponse(err);
    }
    const payload = JSON.stringify(response.body);
    res.writeHead(response.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload) });
    res.end(payload);
  }

  private async dispatch(req: IncomingMessage): Promise<JsonResponse> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const matches = this.routes.filter((r) => r.pattern.test(url.pathname));
    if (matches.length === 0) throw new AuthcapError('not_found', `no route for ${url.pathname}`);
    const route = matches.find((r) => r.method === req.method);
    if (!route) throw new AuthcapError('validation_error', `${req.method} is not allowed on ${url.pathname}`);
    const values = route.pattern.exec(url.pathname)!.slice(1);
    const params = Object.fromEntries(route.keys.map((key, i) => [key, decodeURIComponent(values[i] ?? '')]));
    const body = req.method === 'GET' ? undefined : await readJson(req);
    return route.handler(params, body, url);
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new AuthcapError('validation_error', `request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
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
  if (!(err instanceof AuthcapError)) console.error('authcap api: unexpected error', err);
  return { status: httpStatusFor(error.code), body: { error: error.toJSON() } };
}
