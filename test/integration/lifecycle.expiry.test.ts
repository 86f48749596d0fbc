// Expiry: at validBefore (a durable timer, not a request) the workflow asks the chain what happened
// to the nonce and, finding it unused, ends `expired` by itself. Nothing is sent, the nonce stays
// unused, and commands afterwards are refused.
import { describe, expect, it } from 'vitest';
import { api, chain, payer, tokenBalance, walletSign } from '../support/api.js';
import { expectApiError, expectNoMerchantTransactionFor, markMerchant } from '../support/sideEffects.js';
import { authorizationState, draft, historyStates, nonceLogs, sleep, stored, waitForState } from '../support/lifecycle.js';

const p = payer(7);

describe('an authorization nobody captures expires by itself at validBefore', () => {
  it('a stored authorization with a 4 s window ends expired: lastError authorization_expired, nothing sent', async () => {
    const mark = await markMerchant();
    const balance = await tokenBalance(p.address);
    const startedAt = Math.floor(Date.now() / 1000);
    const s = await stored(p, '3.5', { validForSeconds: 4 });
    const validBefore = Number(s.authorization.validBefore);
    // validForSeconds shortens the window: validBefore ≈ now + 4 s.
    expect(validBefore).toBeGreaterThanOrEqual(startedAt + 3);
    expect(validBefore).toBeLessThanOrEqual(startedAt + 6);

    const expired = await waitForState(s.id, 'expired', 20_000);
    // Not before the deadline: the workflow waited for validBefore.
    expect(Date.now() / 1000).toBeGreaterThanOrEqual(validBefore);
    expect(expired.lastError).toMatchObject({ code: 'authorization_expired' });
    expect(typeof expired.lastError.message).toBe('string');
    expect(Date.parse(expired.lastError.at) / 1000).toBeGreaterThanOrEqual(validBefore - 1);
    expect(expired.capture).toBeNull();
    expect(expired.cancellation).toBeNull();
    expect(expired.cancellationTypedData).toBeNull();
    expect(historyStates(expired)).toEqual(['drafting', 'drafted', 'stored', 'expired']);

    await expectNoMerchantTransactionFor(mark, p.address);
    expect(await authorizationState(p.address, s.authorization.nonce)).toBe(false);
    const logs = await nonceLogs(p.address, s.authorization.nonce);
    expect(logs.used.length + logs.canceled.length).toBe(0);
    expect(await tokenBalance(p.address)).toBe(balance);

    const capture = await api('POST', `/v1/authorizations/${s.id}/capture`);
    expectApiError(capture, 409, 'invalid_state');
    expect(await tokenBalance(p.address)).toBe(balance);
    expect(await authorizationState(p.address, s.authorization.nonce)).toBe(false);
  });

  it('a drafted authorization that is never signed expires too', async () => {
    const mark = await markMerchant();
    const d = await draft(p, '2', { validForSeconds: 4 });
    const validBefore = Number(d.authorization.validBefore);

    const expired = await waitForState(d.id, 'expired', 20_000);
    expect(Date.now() / 1000).toBeGreaterThanOrEqual(validBefore);
    expect(expired.lastError).toMatchObject({ code: 'authorization_expired' });
    expect(expired.typedData).toBeNull();
    expect(historyStates(expired)).toEqual(['drafting', 'drafted', 'expired']);
    expect(await authorizationState(p.address, d.authorization.nonce)).toBe(false);
    await expectNoMerchantTransactionFor(mark, p.address);

    // A signature arriving after the deadline is refused: nothing to store any more.
    const late = await api('POST', `/v1/authorizations/${d.id}/signature`, { signature: walletSign(d.typedData, p.privateKey) });
    expectApiError(late, 409, 'invalid_state');
  });

  it('a capture attempted after validBefore but before the timer fires is refused as expired and sends nothing', async () => {
    const mark = await markMerchant();
    const balance = await tokenBalance(p.address);
    const s = await stored(p, '1.5', { validForSeconds: 2 });
    const validBefore = Number(s.authorization.validBefore);
    // Wait until the chain's clock is past validBefore (anvil mines every 0.2 s).
    for (;;) {
      const block = await chain().getBlock({ blockTag: 'pending' });
      if (block.timestamp >= BigInt(validBefore)) break;
      await sleep(100);
    }
    const res = await api('POST', `/v1/authorizations/${s.id}/capture`);
    // Either the capture saw the deadline first (422 authorization_expired) or the timer already ended it (409).
    expect([422, 409]).toContain(res.status);
    expect(['authorization_expired', 'invalid_state']).toContain(res.body.error.code);
    const expired = await waitForState(s.id, 'expired', 20_000);
    expect(expired.lastError.code).toBe('authorization_expired');
    await expectNoMerchantTransactionFor(mark, p.address);
    expect(await authorizationState(p.address, s.authorization.nonce)).toBe(false);
    expect(await tokenBalance(p.address)).toBe(balance);
  });
});
