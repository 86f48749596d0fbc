// HTTP API v1: JSON in and out, amounts and uint256 values as decimal strings, errors as
// {error:{code,message}} with stable codes. The signature is accepted but never returned.
// Every route but the probes and the payer's checkout pages (their own link token, api/checkout)
// needs an API key; roles decide who may move money.
import type { ResolvedDeployment } from '../runtime/deployment/resolve.js';
import { createServer, type Server } from 'node:http';
import type { AuthorizationResource } from '../domain/authorization.js';
import { AuthcapError } from '../domain/errors.js';
import type { ApiKeyStore } from '../client/apiKeys.js';
import type { AuthcapClient } from '../client/authcapClient.js';
import { metricsText } from '../runtime/metrics.js';
import { Checkout, type CheckoutOptions } from './checkout/routes.js';
import { recordHttpRequest } from './httpMetrics.js';
import { FileIdempotencyStore, type IdempotencyStore } from './idempotency.js';
import { registerDocsRoutes } from './docsPage.js';
import { openApiDocument } from './openapi.js';
import { DEFAULT_RATE_LIMITS, RateLimiter } from './rateLimit.js';
import { Router, type JsonResponse } from './router.js';
import { createSchemas, parseWith, type SchemaOptions } from './schemas.js';
import { registerEventRoutes } from './eventRoutes.js';
import { WaitLimits } from './waitLimits.js';
import { firstNodeReady, nodeReady, NodeHealth, type NodeAnswer } from './nodeHealth.js';
import { selectChain } from '../client/chainSelection.js';
import type { TokenDomain } from '../domain/eip3009.js';
import type { Address } from 'viem';
import { registerX402Routes } from './x402/routes.js';

export interface ApiOptions {
  client: AuthcapClient;
  /** Who may call: every route but /healthz and /readyz needs one of these keys. */
  keys: Pick<ApiKeyStore, 'authenticate'>;
  /**
   * Where Idempotency-Key answers are kept: a store (PostgresIdempotencyStore, shared by API processes
   * on any host), or a directory (FileIdempotencyStore, shared by the API processes of one host).
   */
  idempotency: IdempotencyStore | { dir: string };
  /** Per API key (default: the catalog's AUTHCAP_RATE_LIMIT default; api/main.ts passes the setting). */
  rateLimiter?: RateLimiter;
  /** Per client address, for the routes without a key (default: the catalog's AUTHCAP_PUBLIC_RATE_LIMIT default). */
  publicRateLimiter?: RateLimiter;
  /** The payer's checkout pages: public URL, link secret, merchant name (api/main.ts passes the settings). */
  checkout?: CheckoutOptions;
  /** How long POST …/capture and …/cancel wait for the outcome before answering 202. */
  captureWaitMs?: number;
  /** Caps on open long polls (GET …?wait=), per key and for this process (default: the catalog's defaults of AUTHCAP_MAX_WAITS_PER_KEY, AUTHCAP_MAX_WAITS). */
  waitLimits?: WaitLimits;
  /** The token and the merchant: never accepted as payer. */
  forbiddenPayers?: SchemaOptions['forbiddenPayers'];
  /** The merchant's addresses (AUTHCAP_MERCHANT_ADDRESS): the only recipients /x402/settle pays, and the signers /x402/supported names. */
  merchantAddresses?: readonly Address[];
  /** The node /readyz asks for its head block, and the checkout pages read the token's symbol from. */
  rpcUrl?: string;
  /**
   * The networks and tokens served (runtime/deployment/): amounts may have as many decimals as the
   * tokens do, /readyz asks each network's node, and a network whose node is down is `degraded`.
   */
  deployment?: ResolvedDeployment;
  /** The worker's own /readyz (AUTHCAP_WORKER_READYZ_URL): /readyz reports how many of its workflows' tasks keep failing. */
  workerReadyzUrl?: string;
}

const ORDER_SERVICE = ['order-service'] as const;
const ANY_ROLE = ['order-service', 'operator'] as const;

/** @param listenUrl the API's own URL once it listens: checkout links use it unless AUTHCAP_PUBLIC_URL is set. */
export function createApiRouter(options: ApiOptions, listenUrl: () => string | undefined = () => undefined): Router {
  const { client } = options;
  const served = options.deployment?.networks ?? [];
  // Networks waiting for their node: their tokens are known by address only (decimals come with the
  // node), so amounts may have up to 18 decimals here; the client checks each against its token.
  const waiting = options.deployment?.unavailable ?? [];
  const schemas = createSchemas({
    forbiddenPayers: [
      ...(options.forbiddenPayers ?? []),
      ...served.flatMap((n) => n.tokens.map((t) => ({ address: t.address, why: 'a token contract' }))),
      ...waiting.flatMap((n) => n.tokens.map((address) => ({ address, why: 'a token contract' }))),
    ],
    maxDecimals: Math.max(6, ...served.flatMap((n) => n.tokens.map((t) => t.decimals)), ...(waiting.length > 0 ? [18] : [])),
  });
  // Before a create starts a workflow: the network's node must answer (else 503 chain_unavailable at once).
  const nodes = new NodeHealth((network) => {
    if (!options.deployment) return options.rpcUrl ? [options.rpcUrl] : undefined;
    return [...options.deployment.networks, ...options.deployment.unavailable].find((n) => n.network === network)?.rpcUrls;
  });
  const requireNode = (request: { network?: unknown; token?: unknown }, domain?: TokenDomain) =>
    nodes.require(selectChain(options.deployment?.catalog, request, domain)?.network);
  const ok = (status: number, body: unknown): JsonResponse => ({ status, body });
  const checkout = new Checkout({ client, schemas, rpcUrl: options.rpcUrl, listenUrl, options: options.checkout, deployment: options.deployment });
  // Every resource /v1 answers with carries the payer's links while the payer has something to do.
  const resource = (status: number, body: AuthorizationResource): JsonResponse => ok(status, checkout.withLinks(body));
  const idempotency = 'claim' in options.idempotency ? options.idempotency : new FileIdempotencyStore(options.idempotency.dir);
  const waitLimits = options.waitLimits ?? new WaitLimits();
  const noQuery = (query: URLSearchParams) => parseWith(schemas.noQuery, Object.fromEntries(query), 'the query');
  const idOf = (params: Record<string, string>) => {
    const id = params.id!;
    if (id.length > 300) throw new AuthcapError('not_found', 'no authorization with that id');
    return id;
  };

  const router = new Router({
    authenticate: (presented) => options.keys.authenticate(presented),
    rateLimiter: options.rateLimiter ?? new RateLimiter(DEFAULT_RATE_LIMITS.perKey),
    publicRateLimiter: options.publicRateLimiter ?? new RateLimiter(DEFAULT_RATE_LIMITS.public),
    idempotency,
    onResponse: recordHttpRequest,
  });
  router
    .on('GET', '/healthz', 'public', async () => ok(200, { status: 'ok' }), { unlimited: true })
    .on(
      'GET',
      '/readyz',
      'public',
      async () => {
        const [checks, nodes, worker] = await Promise.all([client.checkReadiness(), networksReady(options), workerReport(options.workerReadyzUrl)]);
        // One network's node down stops only that network's payments: with another one up this API
        // is `degraded`, not down. With one network, its node is the API's readiness.
        const up = Object.values(nodes).filter((n) => n.ok).length;
        const node = Object.values(nodes)[0] ?? { ok: true };
        const ready = checks.temporal.ok && checks.worker.ok && up > 0;
        // A head feed that is down is `degraded`, still 200: captures succeed, only slower (their waits
        // poll the node), so a load balancer must keep sending traffic here; operators see why.
        const degraded = ready && ((worker?.heads !== undefined && !worker.heads.ok) || up < Object.keys(nodes).length);
        const headers: Record<string, string> = ready ? {} : { 'retry-after': '2' };
        // A stuck workflow does not make the API unready either: it is reported (a count only: this
        // route is public, and workflow ids name orders), and the worker's own /readyz names them.
        const extra = {
          ...(worker ? { workflowTasks: worker.workflowTasks } : {}),
          ...(worker?.heads ? { heads: worker.heads } : {}),
          ...(options.deployment ? { networks: nodes } : {}),
        };
        const status = !ready ? 'not_ready' : degraded ? 'degraded' : 'ready';
        return { status: ready ? 200 : 503, body: { status, checks: { ...checks, node, ...extra } }, headers };
      },
      { unlimited: true },
    )
    .on('GET', '/openapi.json', ANY_ROLE, async ({ target }) => {
      noQuery(target.query);
      return ok(200, openApiDocument(router.list(), schemas));
    })
    .on('GET', '/metrics', ANY_ROLE, async ({ target }) => {
      noQuery(target.query);
      const { contentType, body } = await metricsText();
      return { status: 200, body, headers: { 'content-type': contentType } };
    })
    .on('POST', '/v1/authorizations', ORDER_SERVICE, async ({ body, target }) => {
      noQuery(target.query);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AuthcapError('validation_error', 'request body must be a JSON object');
      const b = body as Record<string, unknown>;
      // With a signature it is a pre-signed authorization; without, a draft for the payer to sign.
      if (b.signature !== undefined || b.authorization !== undefined) {
        const presigned = parseWith(schemas.presignedBody, body, 'the body');
        await requireNode(presigned, presigned.domain && ({ ...presigned.domain, chainId: Number(presigned.domain.chainId) } as TokenDomain));
        return resource(201, await client.authorizations.create(presigned));
      }
      const draft = parseWith(schemas.draftBody, body, 'the body');
      await requireNode(draft);
      return resource(201, await client.authorizations.create(draft));
    })
    .on('GET', '/v1/authorizations', ANY_ROLE, async ({ target }) => {
      const q = parseWith(schemas.listQuery, Object.fromEntries(target.query), 'the query');
      const page = await client.authorizations.list({ ...q, limit: q.limit === undefined ? undefined : Number(q.limit) });
      return ok(200, page);
    })
    .on('GET', '/v1/authorizations/:id', ANY_ROLE, async ({ params, target, caller }) => {
      const { wait, state } = parseWith(schemas.getQuery, Object.fromEntries(target.query), 'the query');
      // ?wait=N long-polls: the answer comes as soon as the state changes, instead of the caller polling.
      if (wait !== undefined && Number(wait) > 0) {
        const id = idOf(params);
        // An open wait holds a slot of its key's and of this process's until it answers: past either cap, 429.
        const release = waitLimits.hold(caller!.id, Number(wait));
        try {
          return resource(200, await client.authorizations.wait(id, { waitSeconds: Number(wait), state }));
        } finally {
          release();
        }
      }
      return resource(200, await client.authorizations.get(idOf(params)));
    })
    .on('POST', '/v1/authorizations/:id/signature', ORDER_SERVICE, async ({ params, body, target }) => {
      noQuery(target.query);
      const { signature } = parseWith(schemas.signatureBody, body, 'the body');
      return resource(200, await client.authorizations.sign(idOf(params), signature));
    })
    .on('POST', '/v1/authorizations/:id/capture', ORDER_SERVICE, async ({ params, body, target, idempotencyKey }) => {
      noQuery(target.query);
      const { amount, final } = parseWith(schemas.captureBody, body, 'the body');
      // A held payment's part is one part per Idempotency-Key, kept by its workflow too: a retry after
      // a 202 (which the idempotency store does not keep) finds the same part instead of making another.
      const outcome = await client.authorizations.capture(idOf(params), {
        waitMs: options.captureWaitMs,
        amount,
        ...(final === undefined ? {} : { final }),
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      });
      return resource(outcome.settled ? 200 : 202, outcome.authorization);
    })
    .on('GET', '/v1/authorizations/:id/captures', ANY_ROLE, async ({ params, target }) => {
      noQuery(target.query);
      return ok(200, { data: (await client.authorizations.get(idOf(params))).captures });
    })
    .on('POST', '/v1/authorizations/:id/refunds', ORDER_SERVICE, async ({ params, body, target, idempotencyKey }) => {
      noQuery(target.query);
      const request = parseWith(schemas.refundBody, body, 'the body');
      // The Idempotency-Key is also the refund's own: a retry after a 202 (which the idempotency
      // store does not keep) finds the same refund instead of making a second one.
      const outcome = await client.refunds.create(idOf(params), request, { waitMs: options.captureWaitMs, idempotencyKey });
      return ok(outcome.settled ? 201 : 202, outcome.refund);
    })
    .on('GET', '/v1/authorizations/:id/refunds', ANY_ROLE, async ({ params, target }) => {
      noQuery(target.query);
      return ok(200, { data: await client.refunds.list(idOf(params)) });
    })
    .on('GET', '/v1/refunds/:id', ANY_ROLE, async ({ params, target }) => {
      noQuery(target.query);
      const id = params.id!;
      if (id.length > 400) throw new AuthcapError('not_found', 'no refund with that id');
      return ok(200, await client.refunds.get(id));
    })
    .on('POST', '/v1/authorizations/:id/cancel', ORDER_SERVICE, async ({ params, body, target }) => {
      noQuery(target.query);
      const { signature } = parseWith(schemas.cancelBody, body, 'the body');
      const outcome = await client.authorizations.cancel(idOf(params), signature, { waitMs: options.captureWaitMs });
      return resource(outcome.settled ? 200 : 202, outcome.authorization);
    })
    .on('POST', '/v1/authorizations/:id/void', ANY_ROLE, async ({ params, body, target, caller }) => {
      noQuery(target.query);
      const { reason, by } = parseWith(schemas.voidBody, body, 'the body');
      // Who voided is on the record: the name given, else the role of the key that did it.
      return resource(200, await client.authorizations.void(idOf(params), { reason, by: by ?? (caller?.role === 'operator' ? 'operator' : 'merchant') }));
    });
  registerEventRoutes(router, client);
  registerX402Routes(router, {
    client,
    networks: () => options.deployment?.networks ?? [],
    rpcUrlOf: (chainId) => options.deployment?.networks.find((n) => n.chainId === chainId)?.rpcUrls[0],
    merchants: options.merchantAddresses ?? [],
  });
  checkout.register(router);
  registerDocsRoutes(router, () => openApiDocument(router.list(), schemas));
  return router;
}

/**
 * Each configured network's node (without a deployment file, the one rpcUrl given), by CAIP-2 id. A network waiting for its node
 * since this process started is not served (`served: false`) until the background retry brings it in,
 * a few seconds after its node answers again.
 */
async function networksReady(options: ApiOptions): Promise<Record<string, NodeAnswer & { served?: boolean }>> {
  if (!options.deployment) return { node: await nodeReady(options.rpcUrl) };
  const served = options.deployment.networks.map(async (n) => [n.network, await firstNodeReady(n.rpcUrls)] as const);
  const waiting = options.deployment.unavailable.map(async (n) => {
    const answer = await firstNodeReady(n.rpcUrls);
    const why = answer.ok ? 'its node answers again: served within seconds' : (answer.detail ?? 'its node does not answer');
    return [n.network, { ok: false, served: false, detail: `not served since this API started: ${why}` }] as const;
  });
  return Object.fromEntries(await Promise.all([...served, ...waiting]));
}

export function createApiServer(options: ApiOptions): Server {
  const router = createApiRouter(options, () => ownUrl(server));
  const server = createServer((req, res) => void router.handle(req, res));
  // Slow or stuck clients must not hold sockets for ever.
  server.requestTimeout = 60_000;
  server.headersTimeout = 10_000;
  return server;
}

/** http://host:port this server listens on (IPv6 in brackets), once it does. */
function ownUrl(server: Server): string | undefined {
  const address = server.address();
  if (!address || typeof address === 'string') return undefined;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** Listens on 127.0.0.1 by default: the dev stack is not meant to be reachable from elsewhere. */
/** `host`: AUTHCAP_API_HOST of the process (its default, 127.0.0.1, when not given). */
export async function listen(server: Server, port: number, host = '127.0.0.1'): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return `http://${host}:${actualPort}`;
}

interface WorkerReport {
  /** How many workflows' tasks keep failing on the worker. */
  workflowTasks: { failing: number | null; detail?: string };
  /** Whether the worker's waits wake on announced blocks; absent when the worker does not say. */
  heads?: { ok: boolean; state: string; detail?: string };
}

/** What the worker's /readyz says (undefined when not configured), in the API's public words. */
async function workerReport(url: string | undefined): Promise<WorkerReport | undefined> {
  if (!url) return undefined;
  let body: { failingWorkflows?: unknown[]; heads?: { state?: unknown } };
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    body = (await res.json()) as typeof body;
  } catch {
    const detail = "the worker's /readyz did not answer";
    return { workflowTasks: { failing: null, detail }, heads: { ok: false, state: 'unknown', detail } };
  }
  const failing = Array.isArray(body.failingWorkflows) ? body.failingWorkflows.length : null;
  const workflowTasks = failing ? { failing, detail: "workflow tasks keep failing: the worker's /readyz names them" } : { failing };
  const state = typeof body.heads?.state === 'string' ? body.heads.state : undefined;
  return { workflowTasks, ...(state ? { heads: headsCheck(state) } : {}) };
}

/**
 * The worker's head feed as a readiness check. Our own words, not the worker's: this route is
 * public, and the worker's detail may name its node.
 */
function headsCheck(state: string): { ok: boolean; state: string; detail?: string } {
  const slower = 'captures still succeed but take longer, as their waits poll the node';
  switch (state) {
    case 'live':
      return { ok: true, state };
    case 'off':
      return { ok: true, state, detail: 'the worker has no WebSocket configured (no wsUrl in the deployment file): captures poll the node' };
    case 'connecting':
      return { ok: false, state, detail: `the worker is still subscribing to new blocks; ${slower}` };
    case 'failing':
      return { ok: false, state, detail: `the worker's head feed is down: its WebSocket subscription to new blocks (the network's wsUrl) fails; ${slower}` };
    case 'silent':
      return { ok: false, state, detail: `the worker's head feed is silent: no new block announced for over a minute; ${slower}` };
    default:
      return { ok: false, state, detail: `the worker's head feed is ${state}; ${slower}` };
  }
}
