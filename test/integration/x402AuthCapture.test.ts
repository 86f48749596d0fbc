// x402's `auth-capture` scheme through authcap's facilitator, with x402's own client (`@x402/evm`'s
// AuthCaptureEvmScheme) signing the payment against the dev chain's escrow, which sits at Commerce
// Payments' Base addresses as the client expects. A settle puts the funds on hold (the escrow's
// PaymentAuthorized, the payer debited once, nothing to the merchant yet) and answers with the
// authorize transaction, the same on a second settle; the merchant then captures a part and voids the
// rest through authcap's API; a payment authcap cannot hold is refused with its reason and holds nothing.
import { describe, expect, it } from 'vitest';
import { parseEventLogs, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { AuthCaptureEvmScheme } from '@x402/evm/auth-capture/client';
import { escrowAbi } from '../../domain/escrowAbi.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, chain, dev, tokenBalance } from '../support/api.js';
import { mintTokens } from '../support/contractWallet.js';
import { authorizationState } from '../support/lifecycle.js';

const facilitator = () => ({ key: dev().facilitatorApiKey });
const network = () => `eip155:${dev().chainId}`;

interface Kind {
  x402Version: number;
  scheme: string;
  network: string;
  extra?: Record<string, unknown>;
}

async function authCaptureKind(): Promise<Kind> {
  const res = await api('GET', '/x402/supported', undefined, facilitator());
  expect(res.status).toBe(200);
  const kind = (res.body.kinds as Kind[]).find((k) => k.scheme === 'auth-capture' && k.network === network());
  expect(kind, JSON.stringify(res.body)).toBeDefined();
  return kind!;
}

async function newPayer(amount: bigint) {
  const account = privateKeyToAccount(generatePrivateKey());
  await mintTokens(account.address, amount);
  return account;
}

/** What a resource server asks (its `extra` from /supported, deadlines of its own), and the payment x402's client signs for it. */
async function signedPayment(payer: ReturnType<typeof privateKeyToAccount>, amount: string, overrides: Record<string, unknown> = {}) {
  const kind = await authCaptureKind();
  const now = Math.floor(Date.now() / 1000);
  const requirements = {
    scheme: 'auth-capture',
    network: network(),
    asset: dev().tokenAddress,
    amount,
    payTo: dev().merchantAddress,
    maxTimeoutSeconds: 120,
    extra: { name: 'USD Coin', version: '2', ...kind.extra, captureDeadline: now + 2 * 86_400, refundDeadline: now + 7 * 86_400, ...overrides },
  };
  const client = new AuthCaptureEvmScheme(payer as never);
  const { payload } = await (
    client as unknown as { createPaymentPayload(v: number, r: unknown): Promise<{ payload: Record<string, unknown> }> }
  ).createPaymentPayload(2, requirements);
  return {
    x402Version: 2,
    paymentPayload: { x402Version: 2, resource: { url: 'https://shop.example/held' }, accepted: requirements, payload },
    paymentRequirements: requirements,
  };
}

async function paymentAuthorizedLogs(hash: Hex) {
  const receipt = await chain().getTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return parseEventLogs({ abi: escrowAbi, logs: receipt.logs, eventName: 'PaymentAuthorized' });
}

describe('x402 auth-capture through authcap', () => {
  it('/supported lists the scheme with the extra a server needs: authcap operates, no fee, this escrow', async () => {
    const kind = await authCaptureKind();
    const escrow = dev().networks?.find((n: { network: string }) => n.network === network())?.escrow;
    expect(kind.extra).toMatchObject({
      captureAuthorizer: dev().merchantAddress,
      feeRecipient: '0x0000000000000000000000000000000000000000',
      minFeeBps: 0,
      maxFeeBps: 0,
    });
    if (escrow) expect((kind.extra!.authCaptureEscrow as string).toLowerCase()).toBe(escrow.escrow.toLowerCase());
  });

  it('settle holds the funds once (same transaction on a second settle); the merchant captures a part and voids the rest', async () => {
    const payer = await newPayer(100_000n);
    const body = await signedPayment(payer, '40000');
    const verified = await api('POST', '/x402/verify', body, facilitator());
    expect(verified.body).toMatchObject({ isValid: true, payer: payer.address });

    const [first, second] = await Promise.all([api('POST', '/x402/settle', body, facilitator()), api('POST', '/x402/settle', body, facilitator())]);
    expect(first.body, JSON.stringify(first.body)).toMatchObject({ success: true, payer: payer.address, network: network(), amount: '40000' });
    expect(second.body.transaction).toBe(first.body.transaction);
    const again = await api('POST', '/x402/settle', body, facilitator());
    expect(again.body).toMatchObject({ success: true, transaction: first.body.transaction });

    const authorized = await paymentAuthorizedLogs(first.body.transaction);
    expect(authorized).toHaveLength(1);
    expect(authorized[0]!.args.amount).toBe(40_000n);
    expect(await tokenBalance(payer.address)).toBe(60_000n);
    // Held, not paid: the authorize moved the payer's funds to the escrow, none to the merchant.
    const authorizeReceipt = await chain().getTransactionReceipt({ hash: first.body.transaction });
    const paidToMerchant = parseEventLogs({ abi: tokenAbi, logs: authorizeReceipt.logs, eventName: 'Transfer' }).filter(
      (t) => t.args.to?.toLowerCase() === dev().merchantAddress.toLowerCase(),
    );
    expect(paidToMerchant).toEqual([]);
    const nonce = (body.paymentPayload.payload as { authorization: { nonce: Hex } }).authorization.nonce;
    expect(await authorizationState(payer.address, nonce)).toBe(true);

    // One authorization, listed like any other, held, and captured through authcap's own API.
    const listed = await api('GET', `/v1/authorizations?payer=${payer.address}`);
    expect(listed.body.data).toHaveLength(1);
    const id = listed.body.data[0].id as string;
    const held = await api('GET', `/v1/authorizations/${id}`);
    expect(held.body).toMatchObject({ state: 'held', amountCapturable: '0.04', hold: { authorizeTransactionHash: first.body.transaction } });
    expect(held.body.orderId).toMatch(/^x402:/);
    const part = await api(
      'POST',
      `/v1/authorizations/${id}/capture`,
      { amount: '0.015', final: true },
      { headers: { 'idempotency-key': `x402-ac-${Date.now()}` } },
    );
    expect(part.status, JSON.stringify(part.body)).toBe(200);
    const end = await api('GET', `/v1/authorizations/${id}?wait=20&state=held`);
    expect(end.body.state).toBe('captured');
    expect(end.body.amountCaptured).toBe('0.015');
    // Other files' captures credit the same merchant meanwhile: the part's own transaction says what it paid.
    const [captured] = (await api('GET', `/v1/authorizations/${id}/captures`)).body.data;
    const receipt = await chain().getTransactionReceipt({ hash: captured.transactionHash });
    const toMerchant = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'Transfer' }).filter(
      (t) => t.args.to?.toLowerCase() === dev().merchantAddress.toLowerCase(),
    );
    expect(toMerchant.map((t) => t.args.value)).toEqual([15_000n]);
    // The rest went back to the payer once the final part landed.
    await expect.poll(() => tokenBalance(payer.address), { timeout: 20_000 }).toBe(85_000n);
  }, 120_000);

  it('a payment authcap cannot hold is refused with its reason and holds nothing', async () => {
    const payer = await newPayer(10_000n);
    // A fee authcap does not take: the payer signed it, but authcap's holds carry none.
    const withFee = await signedPayment(payer, '5000', { maxFeeBps: 100 });
    const feeAnswer = await api('POST', '/x402/settle', withFee, facilitator());
    expect(feeAnswer.body).toMatchObject({ success: false, errorReason: 'invalid_payment_requirements', transaction: '' });
    // More than the payer holds.
    const tooMuch = await signedPayment(payer, '20000');
    const verify = await api('POST', '/x402/verify', tooMuch, facilitator());
    expect(verify.body).toMatchObject({ isValid: false, invalidReason: 'insufficient_funds' });
    const settle = await api('POST', '/x402/settle', tooMuch, facilitator());
    expect(settle.body).toMatchObject({ success: false, errorReason: 'insufficient_funds', transaction: '' });
    // Another escrow than this network's.
    const elsewhere = await signedPayment(payer, '5000', { authCaptureEscrow: '0xf96815976523E00e65Be8f34cA5e64b4f41EB19c' });
    const elsewhereAnswer = await api('POST', '/x402/settle', elsewhere, facilitator());
    expect(elsewhereAnswer.body).toMatchObject({ success: false, errorReason: 'invalid_payment_requirements' });
    expect(await tokenBalance(payer.address)).toBe(10_000n);
    for (const body of [withFee, tooMuch, elsewhere]) {
      const nonce = (body.paymentPayload.payload as { authorization: { nonce: Hex } }).authorization.nonce;
      expect(await authorizationState(payer.address, nonce)).toBe(false);
    }
  }, 120_000);
});
