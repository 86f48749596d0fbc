// Pre-signed authorizations (x402-style), signed with ethers v6 — a third EIP-712 implementation,
// neither viem (which authcap verifies with) nor eth-sig-util. A valid one is stored and captured with
// the matching function; a wrong one is refused with a precise code and stores nothing, leaving the
// order free for a valid attempt.
import { describe, expect, it, vi } from 'vitest';
import { parseEventLogs, toFunctionSelector } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, chain, dev, newOrderId, payer, tokenBalance } from '../support/api.js';
import { expectApiError, expectNothingChanges } from '../support/sideEffects.js';
import {
  authorizationMessage,
  authorizationState,
  draft,
  ethersSign,
  expectMerchantCredited,
  listAuthorizations,
  nonceLogs,
  tokenDomain,
  type AuthorizationMessage,
  type PrimaryType,
  type TokenDomain,
  sleep,
} from '../support/lifecycle.js';

// An EOA's 65-byte signature goes through the v, r, s overloads, which FiatToken v2.1 has too.
const transferSelector = toFunctionSelector('transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)');
const receiveSelector = toFunctionSelector('receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)');

const p = payer(13);
const receiver = payer(14);
/** Another payer's key, used only to sign. */
const stranger = payer(15);

function presign(orderId: string, primaryType: PrimaryType, authorization: AuthorizationMessage, signature: string, domain?: TokenDomain) {
  return api('POST', '/v1/authorizations', { orderId, primaryType, authorization, signature, ...(domain ? { domain } : {}) });
}

async function captureAndCheck(id: string, from: `0x${string}`, value: bigint, selector: string) {
  const before = await tokenBalance(from);
  const res = await api('POST', `/v1/authorizations/${id}/capture`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.state).toBe('captured');
  expect(res.body.capture.by).toBe('authcap');
  const hash = res.body.capture.transactionHash;
  const [tx, receipt] = await Promise.all([chain().getTransaction({ hash }), chain().getTransactionReceipt({ hash })]);
  expect(receipt.status).toBe('success');
  expect(tx.to?.toLowerCase()).toBe(dev().tokenAddress.toLowerCase());
  expect(tx.from.toLowerCase()).toBe(dev().merchantAddress.toLowerCase());
  expect(tx.input.slice(0, 10)).toBe(selector);
  expect(await tokenBalance(from)).toBe(before - value);
  await expectMerchantCredited(receipt, from, value);
  const { nonce } = res.body.authorization;
  expect(parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'AuthorizationUsed' }).map((l) => l.args)).toEqual([{ authorizer: from, nonce }]);
  expect((await nonceLogs(from, nonce)).used).toHaveLength(1);
  expect(await authorizationState(from, nonce)).toBe(true);
  return res.body;
}

describe('a pre-signed authorization signed with ethers v6', () => {
  it('TransferWithAuthorization: stored, captured with transferWithAuthorization(v, r, s), exact balances', async () => {
    const domain = await tokenDomain();
    // The domain authcap drafts with is the token's own: ethers signs against the same one.
    const drafted = await draft(p, '1');
    expect(drafted.domain).toEqual(domain);
    await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'only needed its domain' });

    const value = 21_500_000n;
    const authorization = authorizationMessage(p.address, value);
    const signature = await ethersSign('TransferWithAuthorization', domain, authorization, p.privateKey);
    const res = await presign(newOrderId('lc-presigned'), 'TransferWithAuthorization', authorization, signature, domain);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.state).toBe('stored');
    expect(res.body.primaryType).toBe('TransferWithAuthorization');
    expect(res.body.authorization).toEqual(authorization);
    expect(res.body.amount).toBe('21.5');
    expect(JSON.stringify(res.body)).not.toContain(signature.slice(2));

    const captured = await captureAndCheck(res.body.id, p.address, value, transferSelector);
    expect(captured.history.map((h: { state: string }) => h.state)).toEqual(['drafting', 'stored', 'capturing', 'captured']);
  });

  it('ReceiveWithAuthorization (no domain in the request): stored, captured with receiveWithAuthorization(v, r, s)', async () => {
    const value = 3_000_001n;
    const authorization = authorizationMessage(receiver.address, value);
    const signature = await ethersSign('ReceiveWithAuthorization', await tokenDomain(), authorization, receiver.privateKey);
    const res = await presign(newOrderId('lc-presigned-receive'), 'ReceiveWithAuthorization', authorization, signature);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.state).toBe('stored');
    expect(res.body.primaryType).toBe('ReceiveWithAuthorization');
    await captureAndCheck(res.body.id, receiver.address, value, receiveSelector);
  });
});

describe('a refused pre-signed authorization: 422, nothing stored, the order stays free', () => {
  const value = 5_000_000n;
  const cases: { name: string; code: string; make: (domain: TokenDomain) => Promise<{ body: Parameters<typeof presign>; nonce: `0x${string}` }> }[] = [
    {
      name: 'recipient_mismatch (to = the payer)',
      code: 'recipient_mismatch',
      make: async (domain) => {
        const a = authorizationMessage(p.address, value, { to: p.address });
        return { nonce: a.nonce, body: ['', 'TransferWithAuthorization', a, await ethersSign('TransferWithAuthorization', domain, a, p.privateKey), domain] };
      },
    },
    {
      name: 'network_not_served (signed for domain.chainId 1, a network this deployment does not serve)',
      code: 'network_not_served',
      make: async (domain) => {
        const mainnet = { ...domain, chainId: 1 };
        const a = authorizationMessage(p.address, value);
        return { nonce: a.nonce, body: ['', 'TransferWithAuthorization', a, await ethersSign('TransferWithAuthorization', mainnet, a, p.privateKey), mainnet] };
      },
    },
    {
      name: 'token_not_served (signed for another token contract on this network)',
      code: 'token_not_served',
      make: async (domain) => {
        const other = { ...domain, verifyingContract: '0x000000000000000000000000000000000000dEaD' as const };
        const a = authorizationMessage(p.address, value);
        return { nonce: a.nonce, body: ['', 'TransferWithAuthorization', a, await ethersSign('TransferWithAuthorization', other, a, p.privateKey), other] };
      },
    },
    {
      name: 'domain_mismatch (another token name under this token contract)',
      code: 'domain_mismatch',
      make: async (domain) => {
        const mainnet = { ...domain, name: 'Not USD Coin' };
        const a = authorizationMessage(p.address, value);
        return { nonce: a.nonce, body: ['', 'TransferWithAuthorization', a, await ethersSign('TransferWithAuthorization', mainnet, a, p.privateKey), mainnet] };
      },
    },
    {
      name: 'invalid_signature (signed by another key)',
      code: 'invalid_signature',
      make: async (domain) => {
        const a = authorizationMessage(p.address, value);
        return {
          nonce: a.nonce,
          body: ['', 'TransferWithAuthorization', a, await ethersSign('TransferWithAuthorization', domain, a, stranger.privateKey), domain],
        };
      },
    },
    {
      name: 'invalid_signature (a Transfer signature sent as ReceiveWithAuthorization)',
      code: 'invalid_signature',
      make: async (domain) => {
        const a = authorizationMessage(p.address, value);
        return { nonce: a.nonce, body: ['', 'ReceiveWithAuthorization', a, await ethersSign('TransferWithAuthorization', domain, a, p.privateKey), domain] };
      },
    },
    {
      name: 'authorization_expired (validBefore in the past)',
      code: 'authorization_expired',
      make: async (domain) => {
        const now = Math.floor(Date.now() / 1000);
        const a = authorizationMessage(p.address, value, { validAfter: String(now - 3600), validBefore: String(now - 10) });
        return { nonce: a.nonce, body: ['', 'TransferWithAuthorization', a, await ethersSign('TransferWithAuthorization', domain, a, p.privateKey), domain] };
      },
    },
  ];

  it.each(cases)('$name', async ({ code, make }) => {
    const orderId = newOrderId('lc-presigned-bad');
    const { body, nonce } = await make(await tokenDomain());
    body[0] = orderId;
    await expectNothingChanges({ payer: p.address, settleMs: 500 }, async () => {
      const res = await presign(...body);
      expectApiError(res, 422, code);
      expect(res.body).not.toHaveProperty('id');
    });
    expect(await authorizationState(p.address, nonce)).toBe(false);
    if (code === 'network_not_served' || code === 'token_not_served') {
      // Refused before anything starts: no run, so the order is as if never asked for.
      await sleep(1_000);
      expect(await listAuthorizations({ orderId })).toEqual([]);
      return;
    }

    // Visibility (eventually consistent) knows the refused attempt, and it is not stored.
    const attempts = await vi.waitFor(
      async () => {
        const data = await listAuthorizations({ orderId });
        expect(data.length).toBeGreaterThan(0);
        expect(data.every((d) => d.state !== 'drafting')).toBe(true);
        return data;
      },
      { timeout: 10_000, interval: 250 },
    );
    expect(attempts.filter((d) => ['stored', 'capturing', 'captured'].includes(d.state))).toEqual([]);
    expect(attempts.map((d) => d.state)).toEqual(['rejected']);
    expect(await listAuthorizations({ orderId, state: 'stored' })).toEqual([]);

    // The order is free: a valid attempt for the same order is accepted.
    const fresh = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '5' });
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(201);
    expect(fresh.body.state).toBe('drafted');
    expect(fresh.body.authorization.nonce).not.toBe(nonce);
    await api('POST', `/v1/authorizations/${fresh.body.id}/void`, { reason: 'test cleanup' });
  });
});
