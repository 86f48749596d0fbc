// What a refund through the escrow is refused for before anything is sent: the chain's own bounds
// (refundExpiry, what the escrow lets be refunded of the hold) and the token's.
import { describe, expect, it } from 'vitest';
import type { EscrowRefundFacts, HeldRefund } from '../../../domain/holds.js';
import { escrowRefundRefusal } from '../../../workflows/escrowRefundProcedure.js';

const hold = { paymentInfo: { refundExpiry: '2000' }, paymentInfoHash: '0x01' } as unknown as HeldRefund;
const record = { amountMinor: '2000000', chain: undefined };
const facts = (extra: Partial<EscrowRefundFacts> = {}): EscrowRefundFacts => ({
  refundableMinor: '5500000',
  capturableMinor: '0',
  merchantBalance: '9000000',
  allowance: '0',
  paused: false,
  merchantBlacklisted: false,
  payerBlacklisted: false,
  blockNumber: '10',
  blockTimestamp: '1000',
  ...extra,
});

describe('escrowRefundRefusal', () => {
  it('takes a refund within what the escrow lets be refunded, before refundExpiry', () => {
    expect(escrowRefundRefusal(record, hold, facts())).toBeUndefined();
    // The allowance is the procedure's to give, not a reason to refuse.
    expect(escrowRefundRefusal(record, hold, facts({ allowance: '0' }))).toBeUndefined();
  });

  it('refuses past refundExpiry, past what is refundable, on a paused token or a short merchant balance', () => {
    expect(escrowRefundRefusal(record, hold, facts({ blockTimestamp: '2000' }))?.code).toBe('invalid_state');
    const over = escrowRefundRefusal(record, hold, facts({ refundableMinor: '1999999' }));
    expect(over).toMatchObject({ code: 'refund_exceeds_captured' });
    expect(over?.message).toContain('1.999999');
    expect(escrowRefundRefusal(record, hold, facts({ paused: true }))?.code).toBe('token_policy_blocked');
    expect(escrowRefundRefusal(record, hold, facts({ payerBlacklisted: true }))?.code).toBe('token_policy_blocked');
    expect(escrowRefundRefusal(record, hold, facts({ merchantBalance: '1' }))?.code).toBe('insufficient_merchant_balance');
  });
});
