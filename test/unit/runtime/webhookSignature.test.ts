// verifyWebhook is what every receiver trusts: each way a delivery can be forged or replayed must fail.
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook, WebhookVerificationError } from '../../../runtime/webhookSignature.js';

const secret = 'whsec_test_secret_0123456789';
const body = JSON.stringify({ id: 'evt_x', type: 'authorization.captured', data: { object: { id: 'auth_x', amount: '12.5' } } });
const now = Date.UTC(2026, 10, 23, 12, 0, 0);
const t = Math.floor(now / 1000);

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return (err as WebhookVerificationError).code;
  }
  throw new Error('verifyWebhook accepted it');
}

describe('verifyWebhook', () => {
  it('accepts the body and header the worker signed, and returns the event', () => {
    const header = signWebhook(body, secret, t);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(body, header, secret, 300, now)).toEqual(JSON.parse(body));
    expect(verifyWebhook(Buffer.from(body), [header], secret, 300, now).id).toBe('evt_x');
  });

  it('rejects a tampered body (one character changed, or re-serialised)', () => {
    const header = signWebhook(body, secret, t);
    expect(refusal(() => verifyWebhook(body.replace('12.5', '92.5'), header, secret, 300, now))).toBe('webhook_signature_mismatch');
    expect(refusal(() => verifyWebhook(JSON.stringify(JSON.parse(body), null, 1), header, secret, 300, now))).toBe('webhook_signature_mismatch');
  });

  it('rejects a wrong secret', () => {
    const header = signWebhook(body, secret, t);
    expect(refusal(() => verifyWebhook(body, header, `${secret}x`, 300, now))).toBe('webhook_signature_mismatch');
  });

  it('rejects a timestamp outside the tolerance, either side, and a signed timestamp moved', () => {
    expect(refusal(() => verifyWebhook(body, signWebhook(body, secret, t - 301), secret, 300, now))).toBe('webhook_timestamp_out_of_tolerance');
    expect(refusal(() => verifyWebhook(body, signWebhook(body, secret, t + 301), secret, 300, now))).toBe('webhook_timestamp_out_of_tolerance');
    expect(verifyWebhook(body, signWebhook(body, secret, t - 299), secret, 300, now).id).toBe('evt_x');
    // An old delivery replayed with a fresh t: the signature covers t, so it no longer matches.
    const old = signWebhook(body, secret, t - 3_600);
    expect(refusal(() => verifyWebhook(body, old.replace(`t=${t - 3_600}`, `t=${t}`), secret, 300, now))).toBe('webhook_signature_mismatch');
  });

  it('rejects a missing or malformed header', () => {
    for (const header of [undefined, '', 'v1=abc', `t=${t}`, `t=${t},v1=zz`, 'garbage']) {
      expect(refusal(() => verifyWebhook(body, header, secret, 300, now))).toBe('webhook_header_malformed');
    }
  });

  it('accepts when any one of several v1 signatures matches (a secret being rolled)', () => {
    const good = signWebhook(body, secret, t).split(',')[1]!;
    const other = signWebhook(body, 'whsec_other', t).split(',')[1]!;
    expect(verifyWebhook(body, `t=${t},${other},${good}`, secret, 300, now).id).toBe('evt_x');
  });
});
