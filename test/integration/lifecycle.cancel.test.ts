// Payer cancellation: the payer signs the resource's cancellationTypedData, authcap verifies it and
// relays cancelAuthorization from the merchant key. The nonce is burnt onchain (AuthorizationCanceled),
// no funds move, and the authorization can never be captured. A cancellation signed by anyone but
// the payer is refused and changes nothing.
import { describe, expect, it } from 'vitest';
import { parseEventLogs } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, chain, dev, payer, tokenBalance, walletSign } from '../support/api.js';
import { expectApiError, expectNothingChanges } from '../support/sideEffects.js';
import { authorizationState, getAuthorization, historyStates, nonceLogs, stored } from '../support/lifecycle.js';

const p = payer(6);
/** Another payer's key, used only to sign. */
const other = payer(7);

describe('payer cancellation through the HTTP API', () => {
  it('cancels onchain: canceled, one AuthorizationCanceled log, nonce burnt, no funds moved, capture refused', async () => {
    const s = await stored(p, '9.99');
    expect(s.cancellationTypedData).not.toBeNull();
    expect(s.cancellationTypedData.primaryType).toBe('CancelAuthorization');
    const { nonce } = s.authorization;
    const balance = await tokenBalance(p.address);
    expect(await authorizationState(p.address, nonce)).toBe(false);

    const res = await api('POST', `/v1/authorizations/${s.id}/cancel`, { signature: walletSign(s.cancellationTypedData, p.privateKey) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.state).toBe('canceled');
    expect(res.body.cancellation).toMatchObject({ by: 'authcap' });
    expect(res.body.cancellation.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Number(res.body.cancellation.blockNumber)).toBeGreaterThan(0);
    expect(res.body.capture).toBeNull();
    expect(res.body.cancellationTypedData).toBeNull();
    expect(historyStates(res.body)).toEqual(['drafting', 'drafted', 'stored', 'canceling', 'canceled']);

    const hash = res.body.cancellation.transactionHash;
    const [receipt, tx] = await Promise.all([chain().getTransactionReceipt({ hash }), chain().getTransaction({ hash })]);
    expect(receipt.status).toBe('success');
    expect(tx.to?.toLowerCase()).toBe(dev().tokenAddress.toLowerCase());
    expect(tx.from.toLowerCase()).toBe(dev().merchantAddress.toLowerCase());
    expect(receipt.blockNumber.toString()).toBe(res.body.cancellation.blockNumber);
    const canceled = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'AuthorizationCanceled' });
    expect(canceled.map((l) => l.args)).toEqual([{ authorizer: p.address, nonce }]);
    expect(parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'AuthorizationUsed' })).toEqual([]);
    expect(parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'Transfer' })).toEqual([]);

    expect(await authorizationState(p.address, nonce)).toBe(true);
    expect(await tokenBalance(p.address)).toBe(balance);
    // Exactly one cancellation ever for this nonce, and it was never used.
    const logs = await nonceLogs(p.address, nonce);
    expect({ used: logs.used.length, canceled: logs.canceled.map((l) => l.transactionHash) }).toEqual({ used: 0, canceled: [hash] });

    const capture = await api('POST', `/v1/authorizations/${s.id}/capture`);
    expectApiError(capture, 409, 'invalid_state');
    const after = await getAuthorization(s.id);
    expect(after.state).toBe('canceled');
    expect(after.cancellation.transactionHash).toBe(hash);
    expect(await tokenBalance(p.address)).toBe(balance);

    // Cancelling twice is refused as well: the first cancellation stands.
    const twice = await api('POST', `/v1/authorizations/${s.id}/cancel`, { signature: walletSign(s.cancellationTypedData, p.privateKey) });
    expectApiError(twice, 409, 'invalid_state');
    expect((await nonceLogs(p.address, nonce)).canceled).toHaveLength(1);
  });

  it('refuses a cancellation signed by another payer (422, nothing changes); the payer can still cancel', async () => {
    const s = await stored(p, '1.25');
    const { nonce } = s.authorization;

    await expectNothingChanges({ payer: p.address, id: s.id, settleMs: 1_000 }, async () => {
      const res = await api('POST', `/v1/authorizations/${s.id}/cancel`, { signature: walletSign(s.cancellationTypedData, other.privateKey) });
      expectApiError(res, 422, 'invalid_signature');
    });
    const still = await getAuthorization(s.id);
    expect(still.state).toBe('stored');
    expect(still.cancellation).toBeNull();
    expect(await authorizationState(p.address, nonce)).toBe(false);
    expect((await nonceLogs(p.address, nonce)).canceled).toEqual([]);

    const res = await api('POST', `/v1/authorizations/${s.id}/cancel`, { signature: walletSign(still.cancellationTypedData, p.privateKey) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.state).toBe('canceled');
    expect(await authorizationState(p.address, nonce)).toBe(true);
    const logs = await nonceLogs(p.address, nonce);
    expect(logs.canceled.map((l) => l.transactionHash)).toEqual([res.body.cancellation.transactionHash]);
  });

  it('refuses a cancellation of a drafted (unsigned) authorization with 409 and sends nothing', async () => {
    const drafted = (await api('POST', '/v1/authorizations', { orderId: `lc-cancel-draft-${Date.now()}`, payer: p.address, amount: '1' })).body;
    expect(drafted.state).toBe('drafted');
    expect(drafted.cancellationTypedData).toBeNull();
    // The payer could still sign a CancelAuthorization for the drafted nonce; authcap only relays for stored ones.
    const cancelTyped = {
      ...drafted.typedData,
      primaryType: 'CancelAuthorization',
      types: {
        EIP712Domain: drafted.typedData.types.EIP712Domain,
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      message: { authorizer: p.address, nonce: drafted.authorization.nonce },
    };
    await expectNothingChanges({ payer: p.address, id: drafted.id }, async () => {
      const res = await api('POST', `/v1/authorizations/${drafted.id}/cancel`, { signature: walletSign(cancelTyped, p.privateKey) });
      expectApiError(res, 409, 'invalid_state');
    });
    expect(await authorizationState(p.address, drafted.authorization.nonce)).toBe(false);
    await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'test cleanup' });
  });
});
