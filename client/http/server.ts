// HTTP API v1: JSON in and out, amounts and uint256 values as decimal strings, errors as
// {error:{code,message}} with stable codes. The signature is accepted but never returned.
import { createServer, type Server } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { AuthcapError } from '../../domain/errors.js';
import type { AuthcapClient } from '../authcapClient.js';
import { Router, errorResponse, type JsonResponse } from './router.js';

export interface ApiOptions {
  client: AuthcapClient;
  /** When set, every /v1 request needs `Authorization: Bearer <apiKey>`. */
  apiKey?: string | null;
  /** How long POST …/capture waits for the outcome before answering 202. */
  captureWaitMs?: number;
}

function body(input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new AuthcapError('validation_error', 'request body must be a JSON object');
  }
  return input as Record<string, unknown>;
}

export function createApiRouter(options: ApiOptions): Router {
  const { client } = options;
  const ok = (status: number, value: unknown): JsonResponse => ({ status, body: value });
  return new Router()
    .on('GET', '/healthz', async () => ok(200, { status: 'ok' }))
    .on('POST', '/v1/authorizations', async (_, input) => {
      const b = body(input);
      // With a signature it is a pre-signed authorization; without, a draft for the payer to sign.
      if (b.signature !== undefined || b.authorization !== undefined) {
        return ok(201, await client.createPresignedAuthorization({
          orderId: b.orderId as string, primaryType: b.primaryType, authorization: b.authorization, signature: b.signature, domain: b.domain,
        }));
      }
      return ok(201, await client.createAuthorization({
        orderId: b.orderId as string, payer: b.payer as string, amount: b.amount as string,
        validForSeconds: b.validForSeconds as number | undefined,
      }));
    })
    .on('GET', '/v1/authorizations', async (_, __, url) => {
      const q = url.searchParams;
      const limit = q.get('limit');
      const data = await client.list({
        orderId: q.get('orderId') ?? undefined,
        state: q.get('state') ?? undefined,
        payer: q.get('payer') ?? undefined,
        limit: limit === null ? undefined : Number(limit),
      });
      return ok(200, { data });
    })
    .on('GET', '/v1/authorizations/:id', async ({ id }) => ok(200, await client.getAuthorization(id!)))
    .on('POST', '/v1/authorizations/:id/signature', async ({ id }, input) =>
      ok(200, await client.submitSignature(id!, body(input).signature as string)))
    .on('POST', '/v1/authorizations/:id/capture', async ({ id }) => {
      const outcome = await client.capture(id!, { waitMs: options.captureWaitMs });
      return ok(outcome.settled ? 200 : 202, outcome.authorization);
    })
    .on('POST', '/v1/authorizations/:id/cancel', async ({ id }, input) =>
      ok(200, await client.cancel(id!, body(input).signature as string)))
    .on('POST', '/v1/authorizations/:id/void', async ({ id }, input) => {
      const b = body(input);
      return ok(200, await client.voidAuthorization(id!, { reason: b.reason as string, by: b.by as string | undefined }));
    });
}

export function createApiServer(options: ApiOptions): Server {
  const router = createApiRouter(options);
  const expected = options.apiKey ? Buffer.from(`Bearer ${options.apiKey}`) : undefined;
  return createServer((req, res) => {
    if (expected && req.url?.startsWith('/v1')) {
      const given = Buffer.from(req.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        const response = errorResponse(new AuthcapError('unauthorized', 'missing or wrong API key'));
        res.writeHead(response.status, { 'content-type': 'application/json' }).end(JSON.stringify(response.body));
        return;
      }
    }
    void router.handle(req, res);
  });
}

/** Listens on 127.0.0.1 by default: the dev stack is not meant to be reachable from elsewhere. */
export async function listen(server: Server, port: number, host = process.env.AUTHCAP_API_HOST ?? '127.0.0.1'): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return `http://${host}:${actualPort}`;
}
