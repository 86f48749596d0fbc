import { describe, expect, it } from 'vitest';
import { zeroAddress } from 'viem';
import { DEFAULT_HOLD_POLICY, holdSalt, holdTerms, voidDeadline } from '../../../domain/hold.js';
import { holdAuthorizationMessage, holdNonce } from '../../../domain/escrow.js';

const request = {
  operator: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  receiver: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  payer: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
  token: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  amount: 10_000_000n,
  authorizeBy: 1_800_000_000,
  authorizationId: 'order-1',
} as const;
const addresses = { escrow: '0x0000000000000000000000000000000000000e5c', paymentCollector: '0x0000000000000000000000000000000000000c01' } as const;

describe('a hold’s terms', () => {
  it('hold the amount until the payer’s deadline, then 7 days to capture and 30 more to refund, with no fee', () => {
    const terms = holdTerms(request);
    expect(terms).toMatchObject({ maxAmount: 10_000_000n, preApprovalExpiry: 1_800_000_000, minFeeBps: 0, maxFeeBps: 0, feeReceiver: zeroAddress });
    expect(terms.authorizationExpiry - terms.preApprovalExpiry).toBe(7 * 86_400);
    expect(terms.refundExpiry - terms.authorizationExpiry).toBe(30 * 86_400);
    expect(voidDeadline(terms)).toBe(terms.authorizationExpiry - DEFAULT_HOLD_POLICY.voidMarginSeconds);
  });

  it('are the authorization’s own: the same id gives the same nonce, another id another', () => {
    const nonce = (id: string) => holdNonce(holdTerms({ ...request, authorizationId: id }), 31337, addresses.escrow);
    expect(nonce('order-1')).toBe(nonce('order-1'));
    expect(nonce('order-2')).not.toBe(nonce('order-1'));
    expect(holdSalt('order-1')).not.toBe(holdSalt('order-2'));
  });

  it('bind every term: changing any changes what the payer signs', () => {
    const base = holdAuthorizationMessage(holdTerms(request), 31337, addresses);
    expect(base).toMatchObject({ from: request.payer, to: addresses.paymentCollector, value: '10000000', validAfter: '0', validBefore: '1800000000' });
    for (const change of [{ receiver: request.payer }, { amount: 9_999_999n }, { operator: request.payer }, { token: request.payer }]) {
      expect(holdAuthorizationMessage(holdTerms({ ...request, ...change }), 31337, addresses).nonce).not.toBe(base.nonce);
    }
    // The payer is bound by the token (`from`), not the nonce: the same terms offered to another payer share it.
    expect(holdAuthorizationMessage(holdTerms({ ...request, payer: request.operator }), 31337, addresses).nonce).toBe(base.nonce);
    // Another chain or another escrow: another nonce.
    expect(holdAuthorizationMessage(holdTerms(request), 8453, addresses).nonce).not.toBe(base.nonce);
  });
});
