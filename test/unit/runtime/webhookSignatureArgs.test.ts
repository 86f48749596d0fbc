// verifyWebhook's own arguments (finding 7a): a NaN tolerance accepted a year-old delivery, an empty
// secret accepted a forgery signed with "", and an undefined secret threw a bare TypeError. Each must
// be refused with WebhookVerificationError('webhook_arguments_invalid'), before any signature check.
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook, WebhookVerificationError } from '../../../runtime/webhookSignature.js';

const secret = 'whsec_test_secret_0123456789';
const body = JSON.stringify({ id: 'evt_x', type: 'authorization.captured', data: { object: { id: 'auth_x' } } });
const now = Date.UTC(2026, 10, 23, 12, 0, 0);
const t = Math.floor(now / 1000);

function codeOf(fn: () => unknown): string {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown, 'verifyWebhook accepted it').toBeInstanceOf(WebhookVerificationError);
  return (thrown as WebhookVerificationError).code;
}

describe('verifyWebhook refuses its own bad arguments', () => {
  it('a NaN, infinite or negative tolerance does not accept a year-old delivery', () => {
    const yearOld = signWebhook(body, secret, t - 365 * 24 * 3600);
    for (const tolerance of [Number.NaN, Number.POSITIVE_INFINITY, -1, '300' as unknown as number]) {
      expect(codeOf(() => verifyWebhook(body, yearOld, secret, tolerance, now))).toBe('webhook_arguments_invalid');
    }
    // Control: with a real tolerance it is refused for its age, as before.
    expect(codeOf(() => verifyWebhook(body, yearOld, secret, 300, now))).toBe('webhook_timestamp_out_of_tolerance');
  });

  it('an empty secret does not accept a delivery forged with the empty key', () => {
    const forged = signWebhook(body, '', t);
    expect(codeOf(() => verifyWebhook(body, forged, '', 300, now))).toBe('webhook_arguments_invalid');
  });

  it('a missing or non-string secret is a WebhookVerificationError, not a TypeError', () => {
    const header = signWebhook(body, secret, t);
    for (const bad of [undefined, null, 42, Buffer.from(secret)]) {
      expect(codeOf(() => verifyWebhook(body, header, bad as unknown as string, 300, now))).toBe('webhook_arguments_invalid');
    }
  });

  it('a clock that is not a number, or a body that is neither string nor Buffer, is refused', () => {
    const header = signWebhook(body, secret, t);
    expect(codeOf(() => verifyWebhook(body, header, secret, 300, Number.NaN))).toBe('webhook_arguments_invalid');
    expect(codeOf(() => verifyWebhook(JSON.parse(body) as unknown as string, header, secret, 300, now))).toBe('webhook_arguments_invalid');
  });

  it('good arguments still verify, with 0 tolerance meaning "this very second"', () => {
    const header = signWebhook(body, secret, t);
    expect(verifyWebhook(body, header, secret, 0, t * 1000).id).toBe('evt_x');
    expect(verifyWebhook(body, header, secret, undefined, now).id).toBe('evt_x');
  });
});
