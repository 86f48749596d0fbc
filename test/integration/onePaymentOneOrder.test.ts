// One payment pays one order. Regression tests for what an attacker (or a confused order service)
// found: a stored authorization's own signed payload posted again for other orders was stored, and
// when the first order was captured the others ended `captured` too, three orders paid by one
// transfer. Also: a second attempt after `captured`, high-s and compact signature forms.
import { describe, expect, it } from 'vitest';
import { concatHex, hexToBigInt, numberToHex, parseSignature, serializeCompactSignature, signatureToCompactSignature, sliceHex, type Hex } from 'viem';
import { api, newOrderId, payer, walletSign } from '../support/api.js';
import { asPayer, authorizationMessage, draft, ethersSign, fundEth, nonceLogs, stored, tokenDomain, waitForState } from '../support/lifecycle.js';
import { tokenAbi } from '../../domain/tokenAbi.js';

const p = payer(0);
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

function highSTwin(signature: Hex): Hex {
  const s = hexToBigInt(sliceHex(signature, 32, 64));
  const v = Number(hexToBigInt(sliceHex(signature, 64, 65)));
  return concatHex([sliceHex(signature, 0, 32), numberToHex(SECP256K1_N - s, { size: 32 }), numberToHex(v === 27 ? 28 : 27, { size: 1 })]);
}

describe('one signed payment belongs to one order', () => {
  it("refuses a stored authorization's payload for other orders (409 nonce_already_held); only the first order is paid", async () => {
    const first = await stored(p, '0.75');
    const typedData = await draftTypedData(first);
    const signature = walletSign(typedData, p.privateKey);
    const reuse = (orderId: string) =>
      api('POST', '/v1/authorizations', {
        orderId,
        primaryType: 'ReceiveWithAuthorization',
        authorization: first.authorization,
        signature,
      });
    const [second, third] = await Promise.all([reuse(newOrderId('reuse-b')), reuse(newOrderId('reuse-c'))]);
    for (const res of [second, third]) {
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body.error.code).toBe('nonce_already_held');
    }
    const captured = await api('POST', `/v1/authorizations/${first.id}/capture`);
    expect(captured.status, JSON.stringify(captured.body)).toBe(200);
    expect(captured.body.state).toBe('captured');
    // After the capture the payload is refused still (held, and used onchain), and nothing else is paid.
    const late = await reuse(newOrderId('reuse-d'));
    expect([409, 422]).toContain(late.status);
    expect(['nonce_already_held', 'nonce_already_used']).toContain(late.body.error.code);
    const paid = await api('GET', `/v1/authorizations?state=captured&payer=${p.address}&limit=100`);
    expect(paid.body.data.filter((a: { orderId: string }) => /^reuse-[bcd]-/.test(a.orderId))).toEqual([]);
    expect((await nonceLogs(p.address, first.authorization.nonce)).used).toHaveLength(1);
  });

  it('refuses a pre-signed authorization already settled onchain by someone else (422 nonce_already_used)', async () => {
    const domain = await tokenDomain();
    const authorization = authorizationMessage(p.address, 10_000n);
    const signature = await ethersSign('TransferWithAuthorization', domain, authorization, p.privateKey);
    await fundEth(p.address, 10n ** 16n);
    // The payer (anyone may) settles the TransferWithAuthorization to the merchant directly.
    const sig = parseSignature(signature);
    await asPayer(p, (w) =>
      w.writeContract({
        address: domain.verifyingContract,
        abi: tokenAbi,
        functionName: 'transferWithAuthorization',
        args: [
          authorization.from,
          authorization.to,
          BigInt(authorization.value),
          BigInt(authorization.validAfter),
          BigInt(authorization.validBefore),
          authorization.nonce,
          Number(sig.v),
          sig.r,
          sig.s,
        ],
      }),
    );
    const res = await api('POST', '/v1/authorizations', { orderId: newOrderId('settled'), primaryType: 'TransferWithAuthorization', authorization, signature });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.error.code).toBe('nonce_already_used');
  });

  it('refuses a new attempt for an order that was captured (409 order_already_captured)', async () => {
    const orderId = newOrderId('paid-once');
    const first = await stored(p, '0.5', { orderId });
    const captured = await api('POST', `/v1/authorizations/${first.id}/capture`);
    expect(captured.body.state).toBe('captured');
    const again = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '0.5' });
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body.error.code).toBe('order_already_captured');
    expect(again.body.error.details.id).toBe(first.id);
  });
});

describe('signature forms a wallet may produce', () => {
  it('stores the high-s twin of a valid signature in its low-s form, and it captures', async () => {
    const drafted = await draft(p, '0.25');
    const low = walletSign(drafted.typedData, p.privateKey);
    const res = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: highSTwin(low) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.state).toBe('stored');
    const captured = await api('POST', `/v1/authorizations/${drafted.id}/capture`);
    expect(captured.status, JSON.stringify(captured.body)).toBe(200);
    expect(captured.body.state).toBe('captured');
  });

  it('accepts an EIP-2098 compact (64-byte) signature and captures with it', async () => {
    const drafted = await draft(p, '0.2');
    const full = walletSign(drafted.typedData, p.privateKey);
    const compact = serializeCompactSignature(signatureToCompactSignature(parseSignature(full)));
    expect((compact.length - 2) / 2).toBe(64);
    const res = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: compact });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const captured = await api('POST', `/v1/authorizations/${drafted.id}/capture`);
    expect(captured.body.state).toBe('captured');
    await waitForState(drafted.id, 'captured');
  });
});

/** The typed data of a drafted authorization, for tests that stored it through a helper. */
async function draftTypedData(resource: { authorization: unknown; domain: unknown }) {
  return {
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ],
      ReceiveWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'ReceiveWithAuthorization',
    domain: resource.domain,
    message: resource.authorization,
  };
}
