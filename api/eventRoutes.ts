// Events and webhook endpoints over HTTP: order services register endpoints (the signing secret is
// in the 201 answer only), and read the events feed to catch up after being down.
import { z } from 'zod';
import { eventTypes } from '../domain/events.js';
import type { AuthcapClient } from '../client/authcapClient.js';
import type { JsonResponse, Router } from './router.js';
import { orderIdSchema, parseWith } from './schemas.js';

const ORDER_SERVICE = ['order-service'] as const;
const ANY_ROLE = ['order-service', 'operator'] as const;

export const eventSchemas = {
  endpointBody: z
    .object({
      url: z.string().min(1).max(2048).describe('http(s) URL that receives the events (POST, JSON, signed).'),
      events: z
        .array(z.enum([...eventTypes, '*']))
        .min(1)
        .max(eventTypes.length + 1)
        .describe('Event types to receive, or ["*"] for all.'),
      description: z.string().max(200).optional(),
    })
    .strict(),
  eventsQuery: z
    .object({
      after: z
        .string()
        .regex(/^evt_[0-9a-f-]{36}_\d{4,9}$/i, 'must be an event id (evt_…)')
        .optional(),
      type: z.enum(eventTypes).optional(),
      orderId: orderIdSchema.optional(),
      limit: z
        .string()
        .regex(/^\d{1,3}$/, 'must be a whole number')
        .refine((v) => Number(v) >= 1 && Number(v) <= 100, 'must be from 1 to 100')
        .optional(),
    })
    .strict(),
  noQuery: z.object({}).strict(),
};

const ENDPOINT_ID = /^we_[A-Za-z0-9_-]{16}$/;

export function registerEventRoutes(router: Router, client: AuthcapClient): void {
  const ok = (status: number, body: unknown): JsonResponse => ({ status, body });
  const endpointId = (params: Record<string, string>) => {
    const id = params.id!;
    return ENDPOINT_ID.test(id) ? id : '';
  };
  router
    .on('POST', '/v1/webhook_endpoints', ORDER_SERVICE, async ({ body, target }) => {
      parseWith(eventSchemas.noQuery, Object.fromEntries(target.query), 'the query');
      const request = parseWith(eventSchemas.endpointBody, body, 'the body');
      return ok(201, await client.webhookEndpoints.create(request));
    })
    .on('GET', '/v1/webhook_endpoints', ANY_ROLE, async ({ target }) => {
      parseWith(eventSchemas.noQuery, Object.fromEntries(target.query), 'the query');
      return ok(200, { data: await client.webhookEndpoints.list() });
    })
    .on('GET', '/v1/webhook_endpoints/:id', ANY_ROLE, async ({ params, target }) => {
      parseWith(eventSchemas.noQuery, Object.fromEntries(target.query), 'the query');
      return ok(200, await client.webhookEndpoints.get(endpointId(params)));
    })
    .on('DELETE', '/v1/webhook_endpoints/:id', ORDER_SERVICE, async ({ params, target }) => {
      parseWith(eventSchemas.noQuery, Object.fromEntries(target.query), 'the query');
      const deleted = await client.webhookEndpoints.delete(endpointId(params));
      return ok(200, { ...deleted, deleted: true });
    })
    .on('GET', '/v1/events', ANY_ROLE, async ({ target }) => {
      const q = parseWith(eventSchemas.eventsQuery, Object.fromEntries(target.query), 'the query');
      return ok(200, await client.events.list({ ...q, limit: q.limit === undefined ? undefined : Number(q.limit) }));
    });
}
