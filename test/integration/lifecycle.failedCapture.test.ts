// A capture whose precheck fails sends nothing: 422 with the reason, the authorization stays
// `stored` with lastError, and a capture after the cause is fixed succeeds and moves exactly value.
import { describe, expect, it } from 'vitest';
import { parseEther, parseEventLogs } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, chain, dev, newOrderId, payer, tokenBalance } from '../support/api.js';
import { expectApiError, expectNothingChanges } from '../support/sideEffects.js';
import {
  asPayer,
  authorizationMessage,
  authorizationState,
  blacklist,
  ethersSign,
  expectMerchantCredited,
  fundEth,
  getAuthorization,
  historyStates,
  mint,
  nonceLogs,
  stored,
  tokenDomain,
  unBlacklist,
} from '../support/lifecycle.js';

const token = () => ({ address: dev().tokenAddress, abi: tokenAbi }) as const;

/** A failed capture: 422 `code`, nothing sent, balance untouched, the resource `stored` with lastError. */
async function expectRefusedCapture(id: string, payerAddress: `0x${string}`, code: string) {
  const before = await getAuthorization(id);
  await expectNothingChanges({ payer: payerAddress, settleMs: 1_000 }, async () => {
    const res = await api('POST', `/v1/authorizations/${id}/capture`);
    expectApiError(res, 422, code);
  });
  const after = await getAuthorization(id);
  expect(after.state).toBe('stored');
  expect(after.capture).toBeNull();
  expect(after.lastError).toMatchObject({ code });
  expect(after.lastError.message.length).toBeGreaterThan(8);
  expect(Date.parse(after.lastError.at)).toBeGreaterThanOrEqual(Date.parse(before.history.at(-1).at));
  // The attempt is in history (stored → stored is not a new top-level state), and the payload is still there.
  expect(historyStates(after)).toEqual(historyStates(before));
  expect(after.cancellationTypedData).not.toBeNull();
  expect(await authorizationState(payerAddress, after.authorization.nonce)).toBe(false);
  return after;
}

/** A capture that succeeds: 200 captured, exactly `value` from the payer to the merchant, one AuthorizationUsed. */
async function expectCapture(id: string, payerAddress: `0x${string}`, value: bigint) {
  const payerBefore = await tokenBalance(payerAddress);
  const res = await api('POST', `/v1/authorizations/${id}/capture`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.state).toBe('captured');
  expect(res.body.capture.by).toBe('authcap');
  expect(res.body.lastError).toBeNull();
  const receipt = await chain().getTransactionReceipt({ hash: res.body.capture.transactionHash });
  expect(receipt.status).toBe('success');
  expect(res.body.capture.blockNumber).toBe(receipt.blockNumber.toString());
  expect(res.body.capture.blockHash).toBe(receipt.blockHash);
  const { submittedAt, preconfirmedAt, confirmedAt } = res.body.capture;
  expect(Date.parse(submittedAt)).toBeLessThanOrEqual(Date.parse(preconfirmedAt));
  expect(Date.parse(preconfirmedAt)).toBeLessThanOrEqual(Date.parse(confirmedAt));
  expect(await tokenBalance(payerAddress)).toBe(payerBefore - value);
  await expectMerchantCredited(receipt, payerAddress, value);
  const { nonce } = res.body.authorization;
  const used = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'AuthorizationUsed' });
  expect(used.map((l) => l.args)).toEqual([{ authorizer: payerAddress, nonce }]);
  expect((await nonceLogs(payerAddress, nonce)).used).toHaveLength(1);
  expect(await authorizationState(payerAddress, nonce)).toBe(true);
  return res.body;
}

describe('capture prechecks: a failed capture sends nothing and can be retried', () => {
  it('insufficient_balance after the payer spent the funds; captures exactly once after a top-up', async () => {
    const p = payer(8);
    const value = 40_000_000n; // 40 tokens
    const s = await stored(p, '40');

    // The payer spends the money elsewhere before the merchant captures (the payer needs gas for that).
    await fundEth(p.address, parseEther('0.1'));
    const balance = await tokenBalance(p.address);
    const keep = 5_000_000n;
    expect(balance).toBeGreaterThan(keep);
    await asPayer(p, (w) => w.writeContract({ ...token(), functionName: 'transfer', args: [dev().tokenOwner!.address, balance - keep] }));
    expect(await tokenBalance(p.address)).toBe(keep);

    const failed = await expectRefusedCapture(s.id, p.address, 'insufficient_balance');
    expect(await tokenBalance(p.address)).toBe(keep);
    // Still refused on a second try while the funds are missing.
    await expectRefusedCapture(s.id, p.address, 'insufficient_balance');
    expect(historyStates(failed)).toEqual(['drafting', 'drafted', 'stored']);

    await mint(p.address, value);
    const captured = await expectCapture(s.id, p.address, value);
    expect(await tokenBalance(p.address)).toBe(keep);
    expect(historyStates(captured)).toEqual(['drafting', 'drafted', 'stored', 'capturing', 'captured']);
  });

  it('token_policy_blocked while the payer is blacklisted; captures after unBlacklist', async () => {
    const p = payer(9);
    const value = 7_500_000n;
    const s = await stored(p, '7.5');
    try {
      await blacklist(p.address);
      expect(await chain().readContract({ ...token(), functionName: 'isBlacklisted', args: [p.address] })).toBe(true);
      const balance = await tokenBalance(p.address);
      await expectRefusedCapture(s.id, p.address, 'token_policy_blocked');
      expect(await tokenBalance(p.address)).toBe(balance);
    } finally {
      await unBlacklist(p.address);
    }
    expect(await chain().readContract({ ...token(), functionName: 'isBlacklisted', args: [p.address] })).toBe(false);
    await expectCapture(s.id, p.address, value);
  });

  it('authorization_not_yet_valid for a pre-signed authorization whose validAfter is in the future; nothing sent', async () => {
    const p = payer(9);
    const now = Math.floor(Date.now() / 1000);
    const authorization = authorizationMessage(p.address, 1_000_000n, { validAfter: String(now + 3600), validBefore: String(now + 7200) });
    const domain = await tokenDomain();
    const signature = await ethersSign('TransferWithAuthorization', domain, authorization, p.privateKey);
    const res = await api('POST', '/v1/authorizations', {
      orderId: newOrderId('lc-not-yet'),
      primaryType: 'TransferWithAuthorization',
      authorization,
      signature,
      domain,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.state).toBe('stored');
    await expectRefusedCapture(res.body.id, p.address, 'authorization_not_yet_valid');
    await api('POST', `/v1/authorizations/${res.body.id}/void`, { reason: 'test cleanup' });
  });

  it('a capture of a drafted (unsigned) authorization is 409 invalid_state and sends nothing', async () => {
    const p = payer(9);
    const drafted = await api('POST', '/v1/authorizations', { orderId: `lc-capture-draft-${Date.now()}`, payer: p.address, amount: '1' });
    expect(drafted.status).toBe(201);
    await expectNothingChanges({ payer: p.address, id: drafted.body.id, settleMs: 1_000 }, async () => {
      expectApiError(await api('POST', `/v1/authorizations/${drafted.body.id}/capture`), 409, 'invalid_state');
    });
    await api('POST', `/v1/authorizations/${drafted.body.id}/void`, { reason: 'test cleanup' });
  });
});
