// One open authorization per order: a second attempt while one is open is refused (409, with the open
// one's id); once the first is final, a new attempt gets its own id and nonce, and the list by order
// shows every attempt with its state.
import { describe, expect, it, vi } from 'vitest';
import { api, newOrderId, payer, walletSign } from '../support/api.js';
import { expectApiError, expectNothingChanges } from '../support/sideEffects.js';
import { getAuthorization, listAuthorizations } from '../support/lifecycle.js';

const p = payer(15);

describe('attempts per order', () => {
  it('refuses a second attempt while one is open; after a void a new attempt has a new id and nonce; the list shows both', async () => {
    const orderId = newOrderId('lc-order');
    const first = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '8' });
    expect(first.status).toBe(201);
    const firstId: string = first.body.id;

    // While the first is open (drafted), a second draft for the order is refused and changes nothing.
    await expectNothingChanges({ payer: p.address, id: firstId }, async () => {
      const second = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '9' });
      expectApiError(second, 409, 'order_has_open_authorization');
      expect(second.body.error.details).toEqual({ id: firstId });
    });

    // Still refused once it is stored — also for a different payer or amount.
    const signed = await api('POST', `/v1/authorizations/${firstId}/signature`, { signature: walletSign(first.body.typedData, p.privateKey) });
    expect(signed.body.state).toBe('stored');
    const third = await api('POST', '/v1/authorizations', { orderId, payer: payer(14).address, amount: '1' });
    expectApiError(third, 409, 'order_has_open_authorization');
    expect(third.body.error.details.id).toBe(firstId);
    expect((await getAuthorization(firstId)).state).toBe('stored');

    const voided = await api('POST', `/v1/authorizations/${firstId}/void`, { reason: 'customer changed the cart' });
    expect(voided.status).toBe(200);
    expect(voided.body.state).toBe('voided');

    const retry = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '8.5' });
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.body.state).toBe('drafted');
    expect(retry.body.orderId).toBe(orderId);
    expect(retry.body.id).not.toBe(firstId);
    expect(retry.body.authorization.nonce).not.toBe(first.body.authorization.nonce);
    expect(retry.body.authorization.value).toBe('8500000');
    const retryId: string = retry.body.id;

    // Both attempts stay addressable by id, each with its own state.
    expect((await getAuthorization(firstId)).state).toBe('voided');
    expect((await getAuthorization(retryId)).state).toBe('drafted');

    // Now the retry is the open attempt: a further create names it.
    const fourth = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '8.5' });
    expectApiError(fourth, 409, 'order_has_open_authorization');
    expect(fourth.body.error.details.id).toBe(retryId);

    // Visibility is eventually consistent: poll until both attempts show with their states.
    const all = await vi.waitFor(
      async () => {
        const data = await listAuthorizations({ orderId });
        expect(Object.fromEntries(data.map((d) => [d.id, d.state]))).toEqual({ [firstId]: 'voided', [retryId]: 'drafted' });
        return data;
      },
      { timeout: 10_000, interval: 250 },
    );
    for (const d of all) {
      expect(d.orderId).toBe(orderId);
      expect(d.payer).toBe(p.address);
    }
    expect(all.find((d) => d.id === firstId)!.amountMinor).toBe('8000000');
    expect(all.find((d) => d.id === retryId)!.amountMinor).toBe('8500000');

    const onlyVoided = await listAuthorizations({ orderId, state: 'voided' });
    expect(onlyVoided.map((d) => d.id)).toEqual([firstId]);
    const onlyDrafted = await listAuthorizations({ orderId, state: 'drafted' });
    expect(onlyDrafted.map((d) => d.id)).toEqual([retryId]);
    expect(await listAuthorizations({ orderId, state: 'stored' })).toEqual([]);
    const limited = await listAuthorizations({ orderId, limit: '1' });
    expect(limited).toHaveLength(1);

    await api('POST', `/v1/authorizations/${retryId}/void`, { reason: 'test cleanup' });
  });

  it('a pre-signed attempt for an order with an open draft is refused the same way', async () => {
    const orderId = newOrderId('lc-order-presigned');
    const open = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '2' });
    expect(open.status).toBe(201);
    const a = open.body.authorization;
    // A well-formed pre-signed body (the draft's own typed data, signed): refused for the order, not stored.
    const res = await api('POST', '/v1/authorizations', {
      orderId,
      primaryType: 'ReceiveWithAuthorization',
      authorization: a,
      signature: walletSign(open.body.typedData, p.privateKey),
    });
    expectApiError(res, 409, 'order_has_open_authorization');
    expect(res.body.error.details.id).toBe(open.body.id);
    const still = await getAuthorization(open.body.id);
    expect(still.state).toBe('drafted');
    await api('POST', `/v1/authorizations/${open.body.id}/void`, { reason: 'test cleanup' });
  });
});
