// `import { AuthcapClient } from 'authcap'`: what an order service needs, and nothing of the worker's.
// package.json's "exports" points here (compiled: dist/client/index.js, with its .d.ts); receivers that
// only verify webhooks import 'authcap/webhooks', which loads no Temporal client.
export { AuthcapClient } from './authcapClient.js';
export type { AuthcapClientOptions } from './authcapClient.js';
export type { Readiness, ReadinessCheck } from './transport/temporalTransport.js';
// The resources, for typing what a service hands around (`client.authorizations` is an Authorizations).
export type { Authorizations } from './authorizations/resource.js';
export type { Refunds } from './refunds/resource.js';
export type { WebhookEndpoints } from './webhookEndpoints/resource.js';
export type { Events } from './events/resource.js';
export type {
  AuthorizationSummary,
  CancelOptions,
  CaptureOptions,
  CaptureOutcome,
  CreateAuthorizationRequest,
  CreatePresignedRequest,
  ListPage,
  ListRequest,
  VoidRequest,
  WaitOptions,
} from './authorizations/types.js';
export type {
  AuthorizationResource,
  AuthorizationState,
  AuthorizationView,
  CancellationRecord,
  CaptureRecord,
  HistoryEntry,
  TokenRef,
  VoidRecord,
} from '../domain/authorization.js';
export { authorizationStates, finalStates } from '../domain/authorization.js';
export type { Refund, RefundState } from '../domain/refunds.js';
export type { RefundOptions, RefundOutcome, RefundRequest } from './refunds/types.js';

// Errors: a stable code (docs/errors.md) and a readable message.
export { AuthcapError, errorCodes, httpStatusFor, isErrorCode, type ErrorCode } from '../domain/errors.js';

// Events, the feed and webhook endpoints.
export { eventTypes } from '../domain/events.js';
export type { AuthcapEvent, AuthorizationEvent, EventType, RefundEvent, WebhookEndpoint } from '../domain/events.js';
export type { EventPage, ListEventsRequest } from './events/list.js';
export type { CreateWebhookEndpointRequest, CreatedWebhookEndpoint } from './webhookEndpoints/endpointRequest.js';
export {
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  WebhookVerificationError,
  verifyWebhook,
  type WebhookVerificationCode,
} from '../runtime/webhookSignature.js';

// Connecting: the service's entry reads the same settings as the worker (TEMPORAL_ADDRESS…, AUTHCAP_CODEC_KEYS, AUTHCAP_CONFIG)
// and hands them to AuthcapClient.connect.
export { loadTemporalSettings, type TemporalSettings } from '../runtime/temporal.js';
export { loadDeployment } from '../runtime/deployment/load.js';
export { resolveDeployment, type ResolvedDeployment } from '../runtime/deployment/resolve.js';
export { webhookAddressPolicyFromEnv, type WebhookAddressPolicy } from '../runtime/webhookAddressPolicy.js';

// The payer's link, signed with the API's checkout secret.
export { checkoutLink, type CheckoutLinkOptions } from './checkoutLink.js';
