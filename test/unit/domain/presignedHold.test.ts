// A pre-signed hold is taken only as the payment collector's ReceiveWithAuthorization of terms this
// merchant operates: every way a payload can differ from that is refused with its code.
import { describe, expect, it } from 'vitest';
import { zeroAddress, type Address } from 'viem';
import { holdAuthorizationMessage, type EscrowAddresses } from '../../../domain/escrow.js';
import { holdTerms, presignedHoldRefusal } from '../../../domain/hold.js';

const MERCHANT = '0x1111111111111111111111111111111111111111' as Address;
const PAYER = '0x2222222222222222222222222222222222222222' as Address;
const TOKEN = '0x3333333333333333333333333333333333333333' as Address;
const escrow: EscrowAddresses = {
  escrow: '0x4444444444444444444444444444444444444444',
  paymentCollector: '0x5555555555555555555555555555555555555555',
  refundCollector: '0x6666666666666666666666666666666666666666',
};
const NOW = 1_800_000_000;
const ctx = { isMerchant: (a: string) => a.toLowerCase() === MERCHANT.toLowerCase(), token: TOKEN, chainId: 8453, escrow, nowSeconds: NOW };
const terms = holdTerms({
  operator: MERCHANT,
  receiver: MERCHANT,
  payer: PAYER,
  token: TOKEN,
  amount: 5_000_000n,
  authorizeBy: NOW + 600,
  authorizationId: 'x',
});
const message = holdAuthorizationMessage(terms, 8453, escrow);
const refusal = (t = terms, m = message, primaryType = 'ReceiveWithAuthorization') => presignedHoldRefusal(t, m, primaryType, ctx)?.code;

describe('presignedHoldRefusal', () => {
  it("takes the collector's authorization of this merchant's terms", () => {
    expect(refusal()).toBeUndefined();
  });

  it('refuses anything else, each with its code', () => {
    expect(refusal(terms, message, 'TransferWithAuthorization')).toBe('validation_error');
    expect(refusal(terms, { ...message, to: MERCHANT })).toBe('recipient_mismatch');
    expect(refusal({ ...terms, receiver: PAYER })).toBe('recipient_mismatch');
    expect(refusal({ ...terms, token: PAYER })).toBe('domain_mismatch');
    // Terms changed after signing: the nonce is no longer their hash.
    expect(refusal({ ...terms, maxAmount: 6_000_000n })).toBe('validation_error');
    expect(refusal(terms, { ...message, value: '6000000' })).toBe('validation_error');
    expect(refusal({ ...terms, maxFeeBps: 100, feeReceiver: zeroAddress })).toBe('validation_error');
  });

  it('refuses terms whose capture window closes before authcap could hold them, or runs too long', () => {
    const closing = holdTerms(
      { operator: MERCHANT, receiver: MERCHANT, payer: PAYER, token: TOKEN, amount: 1n, authorizeBy: NOW + 60, authorizationId: 'y' },
      { captureWindowSeconds: 600, refundWindowSeconds: 0, voidMarginSeconds: 3_600 },
    );
    expect(refusal(closing, holdAuthorizationMessage(closing, 8453, escrow))).toBe('hold_expired');
    const long = holdTerms(
      { operator: MERCHANT, receiver: MERCHANT, payer: PAYER, token: TOKEN, amount: 1n, authorizeBy: NOW + 60, authorizationId: 'z' },
      { captureWindowSeconds: 90 * 86_400, refundWindowSeconds: 0, voidMarginSeconds: 3_600 },
    );
    expect(refusal(long, holdAuthorizationMessage(long, 8453, escrow))).toBe('validity_too_long');
  });
});
