// What order services are told: one event per transition that matters to an order, with a stable id,
// a type and the authorization as it was at that moment. JSON-safe: events cross Temporal payloads,
// webhook bodies and the events feed unchanged.
import type { AuthorizationResource, AuthorizationState, CaptureView, HoldView } from './authorization.js';
import type { RecordedError } from './errors.js';
import { asResource } from './captures.js';
import { resourceId } from './ids.js';
import { publicRefund, type Refund, type RefundedAuthorization, type RefundRecord } from './refunds.js';

export const eventTypes = [
  'authorization.drafted',
  'authorization.stored',
  'authorization.capture_failed',
  'authorization.preconfirmed',
  'authorization.captured',
  'authorization.canceled',
  'authorization.voided',
  'authorization.expired',
  'authorization.rejected',
  'authorization.reorged',
  'authorization.held',
  'authorization.capture_succeeded',
  'authorization.released',
  'refund.created',
  'refund.succeeded',
  'refund.failed',
] as const;
export type EventType = (typeof eventTypes)[number];
export type RefundEventType = Extract<EventType, `refund.${string}`>;
export type AuthorizationEventType = Exclude<EventType, RefundEventType>;

export function isRefundEventType(type: string): type is RefundEventType {
  return type.startsWith('refund.');
}

/** The event that tells an authorization ended in `state` (a final state, each with its own type). */
export const finalEventType = (state: AuthorizationState) => `authorization.${state}` as EventType;

interface EventEnvelope {
  /** Stable across retries, replays and worker crashes: receivers de-duplicate by it. */
  id: string;
  /** When the transition happened (workflow time). */
  createdAt: string;
  orderId: string;
}

/** Something happened to an authorization: `object` is the authorization. */
export interface AuthorizationEvent extends EventEnvelope {
  type: AuthorizationEventType;
  data: {
    /** The authorization as it was right after the transition. */
    object: AuthorizationResource;
    /** Why a capture failed (capture_failed only). */
    reason?: RecordedError;
    /** The part this event is about (a held payment's capture_succeeded, and capture_failed of a part). */
    capture?: CaptureView;
    /** What went back to the payer of a hold (released only). */
    release?: NonNullable<HoldView['release']>;
  };
}

/**
 * Something happened to a refund: `object` is the refund, and `authorization` the authorization it
 * gives money back for, as it stood right after (its state, `amountCaptured` and `amountRefunded`).
 */
export interface RefundEvent extends EventEnvelope {
  type: RefundEventType;
  data: {
    object: Refund;
    authorization: RefundedAuthorization;
  };
}

export type AuthcapEvent = AuthorizationEvent | RefundEvent;

/** How workflows record a refund event: the record as kept; publicEvent turns it into a Refund. */
export interface RecordedRefundEventData {
  object: RefundRecord;
  authorization: RefundedAuthorization;
}

/** An event as its workflow's memo keeps it: `recordedAt` orders the events feed across authorizations. */
export type RecordedEvent = AuthcapEvent & {
  /** Position among its workflow's events (all its runs), from 1. */
  sequence: number;
  recordedAt: string;
};

/** `evt_<first run id>_<sequence>`: deterministic, so a replayed transition names the same event. */
export function eventId(firstRunId: string, sequence: number): string {
  return `evt_${firstRunId}_${String(sequence).padStart(4, '0')}`;
}

/** The attempt (or refunds ledger) an event belongs to, or undefined when the id is not one of ours. */
export function parseEventId(id: string): { firstRunId: string; sequence: number } | undefined {
  const match = /^evt_([0-9a-f-]{36})_(\d{4,9})$/i.exec(id);
  return match ? { firstRunId: match[1]!, sequence: Number(match[2]) } : undefined;
}

/**
 * An event as receivers and the feed see it: the resource carries its id (built here, outside the
 * workflow sandbox, from the order and the attempt the event id names), the memo's own fields go.
 */
export function publicEvent(event: AuthcapEvent | RecordedEvent): AuthcapEvent {
  const { sequence: _sequence, recordedAt: _recordedAt, ...rest } = event as RecordedEvent;
  if (rest.type.startsWith('refund.')) {
    // A refund event names its refund and authorization by the records it carries (the refunds
    // workflow's own run id, in the event id, names no resource).
    const data = rest.data as unknown as RecordedRefundEventData;
    const record = data.object as RefundRecord | Refund;
    const refund = 'sequence' in record ? publicRefund(record) : record;
    return { ...rest, data: { object: refund, authorization: { ...data.authorization, id: refund.authorizationId } } } as RefundEvent;
  }
  const attempt = parseEventId(event.id);
  if (!attempt) return rest;
  const authorizationEvent = rest as AuthorizationEvent;
  return {
    ...authorizationEvent,
    data: { ...authorizationEvent.data, object: asResource(resourceId(event.orderId, attempt.firstRunId), authorizationEvent.data.object) },
  };
}

export const WEBHOOK_ENDPOINTS_WORKFLOW_TYPE = 'webhookEndpointsWorkflow';
/** One registry of endpoints per namespace. */
export const WEBHOOK_ENDPOINTS_WORKFLOW_ID = 'webhook-endpoints';
/**
 * An authorization (or refunds) workflow keeps each of its events under a memo key of its own
 * (workflows/memoEventLog.ts): a memo update rewrites only the keys it names, so recording an event
 * costs that event, not every event so far.
 */
export const eventMemoKey = (sequence: number) => `event-${String(sequence).padStart(4, '0')}`;
export const EVENT_MEMO_KEY = /^event-\d{4,}$/;
/** The memo entries that hold events (decrypting only these spares a read the rest of the memo). */
export const isEventMemoKey = (key: string) => EVENT_MEMO_KEY.test(key);

/** Every event a workflow's (decoded) memo holds, in order. */
export function eventsFromMemo(memo: Record<string, unknown> | undefined): RecordedEvent[] {
  const byId = new Map<string, RecordedEvent>();
  for (const [key, value] of Object.entries(memo ?? {})) if (EVENT_MEMO_KEY.test(key)) byId.set((value as RecordedEvent).id, value as RecordedEvent);
  return [...byId.values()].sort((a, b) => a.sequence - b.sequence);
}
/** The registry's memo key: its endpoints without their secrets. */
export const ENDPOINTS_MEMO_KEY = 'endpoints';

/** A webhook endpoint as callers see it: never the secret, except once when it is created. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  /** Event types it receives; `*` for all. */
  events: (EventType | '*')[];
  description: string | null;
  createdAt: string;
}

/** As the registry keeps it: with the signing secret (sealed by the payload codec like every payload). */
export interface WebhookEndpointRecord extends WebhookEndpoint {
  secret: string;
}

export function endpointWants(endpoint: Pick<WebhookEndpoint, 'events'>, type: EventType): boolean {
  return endpoint.events.includes('*') || endpoint.events.includes(type);
}

/** Stripe allows 16 endpoints an account; more would mean one event fans out to too many deliveries. */
export const MAX_WEBHOOK_ENDPOINTS = 16;
