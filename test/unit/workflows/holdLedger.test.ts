import { describe, expect, it } from 'vitest';
import { HoldCaptureRepeated, HoldLedger, HoldRefusal } from '../../../workflows/holdLedger.js';
import { capturableMinor, capturedMinor, MAX_CAPTURES_PER_HOLD, type HoldRecord } from '../../../domain/holds.js';
import { toWire } from '../../../domain/escrowCall.js';
import { holdTerms } from '../../../domain/hold.js';

const merchant = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const terms = toWire(
  holdTerms({
    operator: merchant,
    receiver: merchant,
    payer: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    token: merchant,
    amount: 10_000_000n,
    authorizeBy: 1_000,
    authorizationId: 'a',
  }),
);
const expiry = Number(terms.authorizationExpiry);
const held = (): HoldRecord => ({
  terms,
  paymentInfoHash: `0x${'ab'.repeat(32)}`,
  heldMinor: '10000000',
  authorizeTransactionHash: '0xaa',
  captures: [],
  release: null,
});
const at = { nowSeconds: 2_000 };
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;
let keys = 0;
const ask = (ledger: HoldLedger, amountMinor?: string, final = false) => {
  const command = { amountMinor, final, requestKey: `k${++keys}`, requestFingerprint: `${amountMinor}:${final}` };
  return ledger.request(command, ledger.validate(command, at), '2026-11-28T00:00:00Z');
};
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof HoldRefusal) return err.code;
    throw err;
  }
  return undefined;
};

describe('the hold ledger', () => {
  it('takes parts one at a time, each expecting what the one before left, and releases the rest after a final part', () => {
    const ledger = new HoldLedger(held());
    const first = ask(ledger, '3000000');
    const second = ask(ledger, '2500000', true);
    expect(capturableMinor(ledger.hold)).toBe(4_500_000n);
    expect(ledger.next()).toEqual({ capture: first, expectCapturableMinor: '10000000' });
    ledger.submitted(1, tx(1));
    expect(ledger.next(), 'one part on the chain at a time').toBeUndefined();
    ledger.succeeded(1, { transactionHash: tx(1), blockNumber: '5', at: 'now' });
    expect(ledger.next()).toEqual({ capture: second, expectCapturableMinor: '7000000' });
    expect(ledger.releaseDue).toBe(false);
    ledger.submitted(2, tx(2));
    ledger.succeeded(2, { transactionHash: tx(2), blockNumber: '6', at: 'now' });
    expect(capturedMinor(ledger.hold)).toBe(5_500_000n);
    expect(ledger.releaseDue).toBe(true);
    ledger.released('void', '4500000', tx(3), 'now');
    expect(capturableMinor(ledger.hold)).toBe(0n);
    expect(refusal(() => ask(ledger, '1'))).toBe('invalid_state');
  });

  it('refuses more than is capturable, counting parts under way, and gives back what a failed part asked for', () => {
    const ledger = new HoldLedger(held());
    ask(ledger, '6000000');
    expect(refusal(() => ask(ledger, '4000001'))).toBe('amount_exceeds_capturable');
    ledger.submitted(1, tx(1));
    ledger.failed(1, { code: 'capture_reverted', message: 'reverted', at: 'now' });
    expect(capturableMinor(ledger.hold)).toBe(10_000_000n);
    // Absent: all that is capturable.
    expect(ask(ledger).amountMinor).toBe('10000000');
  });

  it('answers the same Idempotency-Key with the part it made, and refuses it for another capture', () => {
    const ledger = new HoldLedger(held());
    const command = { amountMinor: '1000000', requestKey: 'same', requestFingerprint: 'one' };
    ledger.request(command, ledger.validate(command, at), 'now');
    expect(() => ledger.validate(command, at)).toThrow(HoldCaptureRepeated);
    expect(refusal(() => ledger.validate({ ...command, requestFingerprint: 'other' }, at))).toBe('idempotency_key_reused');
    expect(ledger.hold.captures).toHaveLength(1);
  });

  it('refuses captures before the hold is at depth, after a final part, past the capture window, and past the most parts', () => {
    expect(refusal(() => ask(new HoldLedger({ ...held(), heldMinor: '0' }), '1'))).toBe('invalid_state');
    const final = new HoldLedger(held());
    ask(final, '1', true);
    expect(refusal(() => ask(final, '1'))).toBe('invalid_state');
    const late = new HoldLedger(held());
    expect(refusal(() => late.validate({ amountMinor: '1', requestKey: 'late', requestFingerprint: 'x' }, { nowSeconds: expiry }))).toBe('hold_expired');
    const many = new HoldLedger(held());
    for (let i = 0; i < MAX_CAPTURES_PER_HOLD; i += 1) ask(many, '1');
    expect(refusal(() => ask(many, '1'))).toBe('too_many_captures');
    expect(refusal(() => ask(new HoldLedger(held()), '0'))).toBe('validation_error');
  });
});
