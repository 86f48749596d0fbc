// Typed search attributes: how operators find an authorization in the Temporal UI and how the API lists.
// They are not encrypted, so they carry identifiers and amounts, never signatures.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const OrderIdAttribute = defineSearchAttributeKey('OrderId', SearchAttributeType.KEYWORD);
export const PayerAttribute = defineSearchAttributeKey('Payer', SearchAttributeType.KEYWORD);
export const AuthorizationStateAttribute = defineSearchAttributeKey('AuthorizationState', SearchAttributeType.KEYWORD);
export const AmountMinorAttribute = defineSearchAttributeKey('AmountMinor', SearchAttributeType.INT);
export const ValidBeforeAttribute = defineSearchAttributeKey('ValidBefore', SearchAttributeType.DATETIME);
/**
 * A digest of (payer, nonce), not the nonce itself: search attributes are never encrypted, and an
 * unused nonce is part of a payment credential. The log watcher computes the same digest from a log.
 */
export const AuthorizationNonceAttribute = defineSearchAttributeKey('AuthorizationNonce', SearchAttributeType.KEYWORD);

/** The authorization's network (CAIP-2, e.g. "eip155:8453") and token contract (lower case). */
export const NetworkAttribute = defineSearchAttributeKey('Network', SearchAttributeType.KEYWORD);
export const TokenAttribute = defineSearchAttributeKey('Token', SearchAttributeType.KEYWORD);
/** What an x402 payment paid for: the resource's URL, as the resource server named it (absent otherwise). */
export const ResourceAttribute = defineSearchAttributeKey('Resource', SearchAttributeType.KEYWORD);

/**
 * The events a workflow keeps in its memo (workflows/memoEventLog.ts): their types, and when its first
 * and latest were recorded. The events feed and the webhook dispatchers find the runs to read by these.
 */
export const EventTypesAttribute = defineSearchAttributeKey('EventTypes', SearchAttributeType.KEYWORD_LIST);
export const EventsStartedAtAttribute = defineSearchAttributeKey('EventsStartedAt', SearchAttributeType.DATETIME);
export const EventsUpdatedAtAttribute = defineSearchAttributeKey('EventsUpdatedAt', SearchAttributeType.DATETIME);
/** The name in event ids (`evt_<key>_<n>`) of a workflow that keeps its events in its own memo (workflows/memoEventLog.ts). */
export const EventsKeyAttribute = defineSearchAttributeKey('EventsKey', SearchAttributeType.KEYWORD);

/**
 * An authorization's refunds workflow: what it has given back (minor units) and the states of its
 * refunds, so operators find refunded authorizations (`AmountRefundedMinor > 0`, `RefundStates = 'failed'`).
 */
export const AmountRefundedMinorAttribute = defineSearchAttributeKey('AmountRefundedMinor', SearchAttributeType.INT);
export const RefundStatesAttribute = defineSearchAttributeKey('RefundStates', SearchAttributeType.KEYWORD_LIST);

export const searchAttributeKeys = [
  OrderIdAttribute,
  PayerAttribute,
  AuthorizationStateAttribute,
  AmountMinorAttribute,
  ValidBeforeAttribute,
  AuthorizationNonceAttribute,
  EventTypesAttribute,
  EventsStartedAtAttribute,
  EventsUpdatedAtAttribute,
  EventsKeyAttribute,
  AmountRefundedMinorAttribute,
  RefundStatesAttribute,
  NetworkAttribute,
  TokenAttribute,
  ResourceAttribute,
] as const;

/** `Name=Type` pairs in the form `temporal server start-dev --search-attribute` takes. */
export function searchAttributeCliFlags(): string[] {
  const cliType = { KEYWORD: 'Keyword', INT: 'Int', DATETIME: 'Datetime', KEYWORD_LIST: 'KeywordList' } as const;
  return searchAttributeKeys.flatMap((key) => ['--search-attribute', `${key.name}=${cliType[key.type as keyof typeof cliType]}`]);
}
