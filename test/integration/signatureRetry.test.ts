// A signature sent again after its first answer was lost (the API process that held the request died
// before answering, so no Idempotency-Key record holds the answer): the payer's signature of an
// authorization already stored is the same request, answered with where the authorization stands,
// as a capture asked again is. Anything else sent to a stored authorization is still refused.
import { describe, expect, it } from 'vitest';
import { api, payer, walletSign } from '../support/api.js';
import { draft } from '../support/lifecycle.js';
import { expectApiError } from '../support/sideEffects.js';

describe('a signature sent again', () => {
  it("the payer's signature again: 200 with the stored authorization, stored once; another key's signature: 409 invalid_state", async () => {
    const p = payer(12);
    const d = await draft(p, '0.25');
    const signature = walletSign(d.typedData, p.privateKey);
    const first = await api('POST', `/v1/authorizations/${d.id}/signature`, { signature });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await api('POST', `/v1/authorizations/${d.id}/signature`, { signature });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ id: d.id, state: 'stored' });
    expect(again.body.history.filter((e: { state: string }) => e.state === 'stored')).toHaveLength(1);
    // Someone else's signature of the same typed data is not the payer's request: refused.
    const forged = await api('POST', `/v1/authorizations/${d.id}/signature`, { signature: walletSign(d.typedData, payer(13).privateKey) });
    expectApiError(forged, 409, 'invalid_state');
  });

  it('after a void, the payer signature again answers the voided authorization, and stores nothing', async () => {
    const p = payer(12);
    const d = await draft(p, '0.25');
    const signature = walletSign(d.typedData, p.privateKey);
    expect((await api('POST', `/v1/authorizations/${d.id}/signature`, { signature })).status).toBe(200);
    expect((await api('POST', `/v1/authorizations/${d.id}/void`, { reason: 'order canceled' })).status).toBe(200);
    const again = await api('POST', `/v1/authorizations/${d.id}/signature`, { signature });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.state).toBe('voided');
  });

  it('a drafted authorization canceled before it was signed: the signature is refused (it never stored one)', async () => {
    const p = payer(12);
    const d = await draft(p, '0.25');
    expect((await api('POST', `/v1/authorizations/${d.id}/void`, { reason: 'order canceled' })).status).toBe(200);
    const late = await api('POST', `/v1/authorizations/${d.id}/signature`, { signature: walletSign(d.typedData, p.privateKey) });
    expectApiError(late, 409, 'invalid_state');
  });
});
