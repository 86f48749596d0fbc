// Webhook signatures, the way Stripe signs them: `authcap-signature: t=<unix seconds>,v1=<hex>`, where
// v1 is HMAC-SHA256(secret, "<t>.<raw body>"). The timestamp is signed with the body, so a captured
// delivery cannot be replayed later than the receiver's tolerance. Shared by the worker (signs) and
// the client library (verifies), so both agree byte for byte.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AuthcapEvent } from '../domain/events.js';

export const SIGNATURE_HEADER = 'authcap-signature';
export const EVENT_ID_HEADER = 'authcap-event-id';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

function hmacHex(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

/** The header value for this body, signed now (each delivery attempt is signed afresh). */
export function signWebhook(body: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, body)}`;
}

export type WebhookVerificationCode =
  | 'webhook_header_malformed'
  | 'webhook_signature_mismatch'
  | 'webhook_timestamp_out_of_tolerance'
  | 'webhook_body_malformed'
  /** The receiver's own call is wrong (no secret, a tolerance or clock that is not a number, …): a bug to fix, not a forged delivery. */
  | 'webhook_arguments_invalid';

/** Why a delivery was refused: a stable code for the receiver's logs and a readable message. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly code: WebhookVerificationCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Checks a delivery and returns its event. `body` must be the raw request body exactly as received
 * (re-serialised JSON would not match). Throws WebhookVerificationError when the header is missing or
 * malformed, no v1 signature matches this secret, or the timestamp is further than
 * `toleranceSeconds` from now; and with `webhook_arguments_invalid` when the call itself is wrong
 * (an empty or missing secret, a tolerance or `now` that is not a finite number).
 */
export function verifyWebhook(
  body: string | Buffer,
  header: string | string[] | undefined,
  secret: string,
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
  now: number = Date.now(),
): AuthcapEvent {
  // Each of these once let a delivery through or threw a TypeError: an empty secret makes forging
  // trivial (HMAC with a known key), a NaN tolerance makes every comparison false (no expiry at all).
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new WebhookVerificationError('webhook_arguments_invalid', "secret must be the endpoint's signing secret (a non-empty string)");
  }
  if (typeof toleranceSeconds !== 'number' || !Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new WebhookVerificationError('webhook_arguments_invalid', 'toleranceSeconds must be a finite number of seconds, 0 or more');
  }
  if (typeof now !== 'number' || !Number.isFinite(now)) {
    throw new WebhookVerificationError('webhook_arguments_invalid', 'now must be a finite time in milliseconds');
  }
  if (typeof body !== 'string' && !Buffer.isBuffer(body)) {
    throw new WebhookVerificationError('webhook_arguments_invalid', 'body must be the raw request body, a string or a Buffer');
  }
  const raw = typeof body === 'string' ? body : body.toString('utf8');
  const value = Array.isArray(header) ? header[0] : header;
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) {
    throw new WebhookVerificationError('webhook_header_malformed', `missing ${SIGNATURE_HEADER} header`);
  }
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of value.split(',')) {
    const [key, item] = part.trim().split('=', 2);
    if (key === 't' && item && /^\d{1,12}$/.test(item)) timestamp = Number(item);
    else if (key === 'v1' && item && /^[0-9a-f]{64}$/.test(item)) signatures.push(item);
  }
  if (timestamp === undefined || signatures.length === 0) {
    throw new WebhookVerificationError('webhook_header_malformed', `${SIGNATURE_HEADER} must read t=<unix seconds>,v1=<hex HMAC-SHA256>`);
  }
  const expected = Buffer.from(hmacHex(secret, timestamp, raw), 'hex');
  // Several v1 values may be present (while a secret is being rolled): any one matching is enough.
  const matches = signatures.some((signature) => timingSafeEqual(Buffer.from(signature, 'hex'), expected));
  if (!matches) throw new WebhookVerificationError('webhook_signature_mismatch', 'no signature matches this body and secret');
  if (Math.abs(now / 1000 - timestamp) > toleranceSeconds) {
    throw new WebhookVerificationError('webhook_timestamp_out_of_tolerance', `the signature's timestamp is more than ${toleranceSeconds} s from now`);
  }
  try {
    return JSON.parse(raw) as AuthcapEvent;
  } catch {
    throw new WebhookVerificationError('webhook_body_malformed', 'the signed body is not JSON');
  }
}
