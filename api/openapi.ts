// The OpenAPI 3.1 document, generated from the router's routes and the very schemas that check
// requests (zod's JSON Schema output is OpenAPI 3.1's schema dialect), so it cannot drift.
import { z } from 'zod';
import { authorizationStates } from '../domain/authorization.js';
import { errorCodes } from '../domain/errors.js';
import type { ApiRole } from '../client/apiKeys.js';
import { openApiDescription } from './errorTable.js';
import { eventSchemas } from './eventRoutes.js';
import type { Schemas } from './schemas.js';
import { facilitatorRequestSchema } from './x402/wire.js';
import { x402Reasons } from './x402/reasons.js';

type RouteInfo = { method: string; path: string; roles: readonly ApiRole[] | 'public' };

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  // Requests are described as callers send them (a network name before it is read as its CAIP-2 id).
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
  return rest;
}

const bodies: Record<string, (s: Schemas) => z.ZodType> = {
  'POST /v1/authorizations': (s) => z.union([s.draftBody, s.presignedBody]),
  'POST /v1/authorizations/:id/signature': (s) => s.signatureBody,
  'POST /v1/authorizations/:id/cancel': (s) => s.cancelBody,
  'POST /v1/authorizations/:id/void': (s) => s.voidBody,
  'POST /v1/authorizations/:id/capture': (s) => s.captureBody,
  'POST /v1/authorizations/:id/refunds': (s) => s.refundBody,
  'POST /checkout/:id/signature': (s) => s.signatureBody,
  'POST /v1/webhook_endpoints': () => eventSchemas.endpointBody,
  'POST /checkout/:id/cancel': (s) => s.cancelBody,
  'POST /x402/verify': () => facilitatorRequestSchema,
  'POST /x402/settle': () => facilitatorRequestSchema,
};

const summaries: Record<string, string> = {
  'GET /healthz': 'Liveness: the API process answers.',
  'GET /readyz':
    "Readiness: Temporal reachable, a worker polling, the node answering (503 if not); 200 `degraded` while the worker's head feed is down (captures slower).",
  'GET /openapi.json': 'This document.',
  'GET /docs': 'This reference (HTML): the document rendered, with every error code.',
  'GET /docs/openapi.json': 'This document, without an API key: what the reference page renders.',
  'GET /docs/assets/:file': "The reference page's script and style (Swagger UI, served here; content-hashed names).",
  'GET /metrics': 'Prometheus metrics of this API process.',
  'POST /v1/authorizations': 'Draft an authorization for the payer to sign, or store one signed elsewhere.',
  'GET /v1/authorizations': 'List authorizations by order, payer or state, newest first, with paging.',
  'GET /v1/authorizations/:id': 'The authorization as it stands.',
  'POST /v1/authorizations/:id/signature': "Store the payer's signature over the drafted typed data.",
  'POST /v1/authorizations/:id/capture':
    'Capture now, all or `amount` of it (a partial capture gives the rest back as a refund); of a hold, one part (`final` returns the rest; the Idempotency-Key makes it one); 200 captured, 202 still capturing after the wait.',
  'GET /v1/authorizations/:id/captures': "The authorization's captures, in order: a held payment's parts, or its one capture.",
  'POST /v1/authorizations/:id/refunds':
    'Give money back from a captured authorization (201 with the refund once final, succeeded or failed; 202 pending after the wait). Never more than was captured.',
  'GET /v1/authorizations/:id/refunds': "The authorization's refunds, oldest first (a partial capture's release first).",
  'GET /v1/refunds/:id': 'One refund.',
  'POST /v1/authorizations/:id/cancel': "Relay the payer's CancelAuthorization signature.",
  'POST /v1/authorizations/:id/void': 'Void offchain: nothing is ever submitted afterwards.',
  'POST /v1/webhook_endpoints': 'Register a URL for signed event deliveries; the signing secret is in this answer only.',
  'GET /v1/webhook_endpoints': 'The webhook endpoints (without their secrets).',
  'GET /v1/webhook_endpoints/:id': 'One webhook endpoint (without its secret).',
  'DELETE /v1/webhook_endpoints/:id': 'Stop deliveries to this endpoint (those under way finish).',
  'GET /v1/events': 'The events feed, oldest first after the cursor: catch up after being down.',
  'GET /checkout/:id': "The payer's checkout page (HTML), opened by the resource's checkoutUrl.",
  'GET /checkout/:id/cancel': "The payer's cancel page (HTML), opened by the resource's cancelUrl.",
  'GET /checkout/:id/session': 'What the checkout pages show: merchant, amount, token, window, state, the typed data to sign.',
  'POST /checkout/:id/signature': "The payer's signature over the draft's typedData, from the checkout page.",
  'POST /checkout/:id/cancel': "The payer's CancelAuthorization signature, from the cancel page.",
  'GET /checkout-assets/:file': "The checkout pages' bundled script and style (content-hashed names).",
  'GET /x402/supported': 'x402 facilitator: the schemes, networks and signers this deployment settles (docs/x402.md).',
  'POST /x402/verify':
    "x402 facilitator: whether a payment could be settled now (signature, recipient, amount, window, the payer's balance, the nonce); changes nothing. A refused payment is 200 with `isValid: false` and its reason.",
  'POST /x402/settle':
    'x402 facilitator: pays the payment exactly once (an authorization captured by the merchant key) and answers with the transaction once it is in a block; the same payment settled again answers with the same transaction. A refused payment is 200 with `success: false` and its reason.',
};

const refundContent = { 'application/json': { schema: { $ref: '#/components/schemas/Refund' } } };
const authorizationContent = { 'application/json': { schema: { $ref: '#/components/schemas/Authorization' } } };
const responses: Record<string, Record<string, unknown>> = {
  'POST /v1/authorizations': {
    '201': { description: 'The authorization: `drafted` with typedData to sign, or `stored` when pre-signed.', content: authorizationContent },
  },
  'GET /v1/authorizations/:id': { '200': { description: 'The authorization.', content: authorizationContent } },
  'POST /v1/authorizations/:id/refunds': {
    '201': { description: 'The refund, final within the wait: succeeded, or failed with `failure` (nothing moved).', content: refundContent },
    '202': { description: 'The refund, still pending after the wait: follow it with GET /v1/refunds/{id}.', content: refundContent },
  },
  'GET /v1/refunds/:id': { '200': { description: 'The refund.', content: refundContent } },
  'GET /v1/authorizations/:id/captures': {
    '200': {
      description: "The authorization's captures, in order.",
      content: { 'application/json': { schema: { type: 'object', properties: { data: { type: 'array', items: { $ref: '#/components/schemas/Capture' } } } } } },
    },
  },
  'GET /x402/supported': {
    '200': {
      description: 'What this deployment settles.',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['kinds', 'extensions', 'signers'],
            properties: {
              kinds: {
                type: 'array',
                items: { type: 'object', properties: { x402Version: { type: 'integer' }, scheme: { type: 'string' }, network: { type: 'string' } } },
              },
              extensions: { type: 'array', items: { type: 'string' } },
              signers: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
            },
          },
        },
      },
    },
  },
  'POST /x402/verify': {
    '200': {
      description: 'The verdict; `invalidReason` is an x402 reason code (docs/x402.md).',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['isValid'],
            properties: {
              isValid: { type: 'boolean' },
              invalidReason: { type: 'string', enum: [...x402Reasons] },
              invalidMessage: { type: 'string' },
              payer: { type: 'string' },
            },
          },
        },
      },
    },
  },
  'POST /x402/settle': {
    '200': {
      description: 'The outcome: the transaction that paid, or `errorReason` (an x402 reason code; `settlement_pending`: settle again for the outcome).',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['success', 'transaction', 'network'],
            properties: {
              success: { type: 'boolean' },
              errorReason: { type: 'string', enum: [...x402Reasons] },
              errorMessage: { type: 'string' },
              payer: { type: 'string' },
              transaction: { type: 'string', description: 'The transaction that paid; "" when none did.' },
              network: { type: 'string' },
              amount: { type: 'string' },
            },
          },
        },
      },
    },
  },
  'GET /v1/authorizations/:id/refunds': {
    '200': {
      description: "The authorization's refunds, oldest first.",
      content: { 'application/json': { schema: { type: 'object', properties: { data: { type: 'array', items: { $ref: '#/components/schemas/Refund' } } } } } },
    },
  },
};

/** Which network and token: on authorizations and refunds (issue 27). */
const chainProperties = {
  network: { type: 'string', description: 'CAIP-2 network id, e.g. "eip155:8453".', pattern: '^eip155:[1-9][0-9]*$' },
  token: {
    type: 'object',
    description: 'The token: amounts are decimal strings in its decimals.',
    required: ['address', 'symbol', 'decimals'],
    properties: { address: { type: 'string' }, symbol: { type: 'string' }, decimals: { type: 'integer', minimum: 0, maximum: 36 } },
  },
} as const;

/** The authorization resource (domain/authorization.ts `AuthorizationResource`): its main fields. */
const authorizationSchema = {
  type: 'object',
  required: ['id', 'orderId', 'state', 'network', 'token', 'amount', 'amountCaptured', 'amountRefunded', 'history'],
  properties: {
    id: { type: 'string', description: 'auth_…' },
    orderId: { type: 'string' },
    ...chainProperties,
    state: { type: 'string', enum: [...authorizationStates] },
    primaryType: { type: 'string', enum: ['ReceiveWithAuthorization', 'TransferWithAuthorization'] },
    amount: { type: 'string', description: "Decimal token amount, in the token's decimals." },
    amountCaptured: { type: 'string' },
    amountCapturing: { type: ['string', 'null'] },
    amountCapturable: {
      type: 'string',
      description: 'What a capture may take now: all of it while `stored`; of a hold, what is held less the parts captured or under way.',
    },
    captures: {
      type: 'array',
      items: { $ref: '#/components/schemas/Capture' },
      description: "A held payment's parts, in order; a plain capture is one entry.",
    },
    hold: {
      type: ['object', 'null'],
      description: 'The escrow hold (docs/holds.md): what is held, until when, and what went back to the payer.',
      properties: {
        paymentInfoHash: { type: 'string' },
        amountHeld: { type: 'string' },
        authorizeTransactionHash: { type: ['string', 'null'] },
        captureBefore: { type: 'string', format: 'date-time' },
        voidAt: { type: 'string', format: 'date-time' },
        refundBefore: { type: 'string', format: 'date-time' },
        terms: { type: 'object', description: 'The PaymentInfo the payer signed (numbers as decimal strings).' },
        release: { type: ['object', 'null'], description: '`{kind: void | reclaim, amount, transactionHash, at}`' },
      },
    },
    amountRefunded: { type: 'string' },
    typedData: { type: ['object', 'null'], description: 'eth_signTypedData_v4 payload while `drafted`: its domain is the token on the network.' },
    cancellationTypedData: { type: ['object', 'null'] },
    capture: { type: ['object', 'null'] },
    lastError: { type: ['object', 'null'] },
    history: { type: 'array', items: { type: 'object' } },
  },
};

/** One capture (domain/authorization.ts `CaptureView`): a held payment's part, or a plain capture. */
const captureSchema = {
  type: 'object',
  required: ['id', 'amount', 'final', 'status', 'transactionHash', 'blockNumber', 'failure', 'requestedAt', 'succeededAt'],
  properties: {
    id: { type: 'string', description: 'cap_…' },
    amount: { type: 'string' },
    final: { type: 'boolean' },
    status: { type: 'string', enum: ['pending', 'submitted', 'succeeded', 'failed'] },
    transactionHash: { type: ['string', 'null'] },
    blockNumber: { type: ['string', 'null'] },
    failure: { type: ['object', 'null'] },
    requestedAt: { type: 'string', format: 'date-time' },
    succeededAt: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** A refund as every answer and event carries it (domain/refunds.ts `Refund`). */
const refundSchema = {
  type: 'object',
  required: ['id', 'authorizationId', 'orderId', 'amount', 'reason', 'state', 'transactionHash', 'failure', 'createdAt', 'succeededAt'],
  properties: {
    id: { type: 'string', description: 'ref_…' },
    authorizationId: { type: 'string' },
    orderId: { type: 'string' },
    ...chainProperties,
    amount: { type: 'string', description: "Decimal token amount, in the token's decimals." },
    reason: { type: ['string', 'null'], description: '`partial_capture` for what a partial capture gave back.' },
    state: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
    transactionHash: { type: ['string', 'null'] },
    failure: {
      type: ['object', 'null'],
      properties: { code: { type: 'string', enum: Object.keys(errorCodes) }, message: { type: 'string' } },
    },
    createdAt: { type: 'string', format: 'date-time' },
    succeededAt: { type: ['string', 'null'], format: 'date-time' },
  },
};

export function openApiDocument(routes: RouteInfo[], schemas: Schemas): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    const openApiPath = route.path.replace(/:([a-zA-Z]+)/g, '{$1}');
    const parameters: unknown[] = [];
    if (route.path.includes(':id')) parameters.push({ name: 'id', in: 'path', required: true, schema: { type: 'string' } });
    if (route.path.includes(':file')) parameters.push({ name: 'file', in: 'path', required: true, schema: { type: 'string' } });
    if (route.path.startsWith('/checkout/')) {
      // The one-authorization link token from checkoutUrl / cancelUrl: it never opens anything on /v1.
      parameters.push({ name: 'token', in: 'query', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' } });
    }
    if (key === 'GET /v1/authorizations') {
      for (const [name, field] of Object.entries(schemas.listQuery.shape))
        parameters.push({ name, in: 'query', required: false, schema: jsonSchema(field as z.ZodType) });
    }
    if (key === 'GET /v1/authorizations/:id') {
      for (const [name, field] of Object.entries(schemas.getQuery.shape))
        parameters.push({ name, in: 'query', required: false, schema: jsonSchema(field as z.ZodType) });
    }
    if (key === 'GET /v1/events') {
      for (const [name, field] of Object.entries(eventSchemas.eventsQuery.shape))
        parameters.push({ name, in: 'query', required: false, schema: jsonSchema(field as z.ZodType) });
    }
    if (route.method === 'POST' && route.roles !== 'public' && !route.path.startsWith('/x402/'))
      parameters.push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } });
    const body = bodies[key];
    paths[openApiPath] = {
      ...paths[openApiPath],
      [route.method.toLowerCase()]: {
        summary: summaries[key] ?? key,
        ...(route.roles === 'public' ? { security: [] } : { 'x-authcap-roles': route.roles }),
        ...(parameters.length ? { parameters } : {}),
        ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(body(schemas)) } } } } : {}),
        responses: {
          ...(responses[key] ?? { '200': { description: 'OK' } }),
          default: { description: 'An error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    // The error table is in the description: every OpenAPI viewer shows it, the reference page included.
    info: { title: 'authcap API', version: '1', description: openApiDescription() },
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key: `authcap keys create --role order-service|operator|facilitator`.' },
      },
      schemas: {
        Authorization: authorizationSchema,
        Capture: captureSchema,
        Refund: refundSchema,
        Error: {
          type: 'object',
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string', enum: Object.keys(errorCodes) }, message: { type: 'string' }, details: { type: 'object' } },
            },
          },
        },
      },
    },
  };
}
