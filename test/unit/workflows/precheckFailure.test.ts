// workflows/precheckFailure.ts: which reason a failed precheck reports, in the token's revert order.
import { describe, it, expect } from 'vitest';
import { precheckFailure } from '../../../workflows/precheckFailure.js';
import type { CapturePrecheckFacts } from '../../../domain/facts.js';
import { VALID_AFTER, VALID_BEFORE, VALUE, authorization, goodFacts } from './machineFixtures.js';

const context = { value: VALUE, authorization };

/** Every fact failing at once; each step below fixes the one the previous answer named. */
const allBad: Partial<CapturePrecheckFacts> = {
  paused: true,
  payerBlacklisted: true,
  merchantBlacklisted: true,
  chainTime: VALID_AFTER.toString(),
  authorizationUsed: true,
  payerBalance: '0',
  merchantGasBalance: '0',
  requiredGas: '1',
};

describe('precheckFailure', () => {
  it('reports failures in the token revert order, one at a time', () => {
    const order: [string, string, RegExp, Partial<CapturePrecheckFacts>][] = [
      ['token_policy_blocked', 'paused', /paused/, { paused: false }],
      ['token_policy_blocked', 'payer blacklisted', /payer/, { payerBlacklisted: false }],
      ['token_policy_blocked', 'merchant blacklisted', /merchant/, { merchantBlacklisted: false }],
      ['authorization_not_yet_valid', 'not yet valid', /validAfter/, { chainTime: (VALID_AFTER + 1n).toString() }],
      ['nonce_already_used', 'used', /used or canceled/, { authorizationUsed: false }],
      ['insufficient_balance', 'balance', /payer holds/, { payerBalance: VALUE }],
      ['insufficient_merchant_gas', 'gas', /wei/, { merchantGasBalance: '1' }],
    ];
    let facts = goodFacts(allBad);
    for (const [code, label, message, fix] of order) {
      const failure = precheckFailure(context, facts);
      expect(failure.code, label).toBe(code);
      expect(failure.message, label).toMatch(message);
      facts = { ...facts, ...fix };
    }
    expect(precheckFailure(context, facts).code).toBe('internal_error');
  });

  it('reports expiry before a used nonce and before balances', () => {
    const failure = precheckFailure(context, goodFacts({ chainTime: VALID_BEFORE.toString(), authorizationUsed: true, payerBalance: '0' }));
    expect(failure.code).toBe('authorization_expired');
    expect(failure.message).toContain(VALID_BEFORE.toString());
  });

  it('a paused token is reported before an expired window', () => {
    expect(precheckFailure(context, goodFacts({ chainTime: VALID_BEFORE.toString(), paused: true })).code).toBe('token_policy_blocked');
  });

  it('treats the window as strict at both ends', () => {
    expect(precheckFailure(context, goodFacts({ chainTime: VALID_AFTER.toString() })).code).toBe('authorization_not_yet_valid');
    expect(precheckFailure(context, goodFacts({ chainTime: VALID_BEFORE.toString() })).code).toBe('authorization_expired');
    expect(precheckFailure(context, goodFacts({ chainTime: (VALID_BEFORE - 1n).toString() })).code).toBe('internal_error');
  });

  it('names the amounts as decimal token values in the balance message', () => {
    const failure = precheckFailure(context, goodFacts({ payerBalance: '12499999' }));
    expect(failure.code).toBe('insufficient_balance');
    expect(failure.message).toBe('payer holds 12.499999, the authorization needs 12.5');
  });

  it('names the gas amounts in the gas message', () => {
    const failure = precheckFailure(context, goodFacts({ merchantGasBalance: '5', requiredGas: '6' }));
    expect(failure.code).toBe('insufficient_merchant_gas');
    expect(failure.message).toContain('5 wei');
    expect(failure.message).toContain('6');
  });

  it('equal balances are not failures', () => {
    expect(precheckFailure(context, goodFacts({ payerBalance: VALUE, merchantGasBalance: '9', requiredGas: '9' })).code).toBe('internal_error');
  });

  it('skips the window checks when there is no authorization yet', () => {
    const failure = precheckFailure({ value: VALUE, authorization: null }, goodFacts({ chainTime: '0', authorizationUsed: true }));
    expect(failure.code).toBe('nonce_already_used');
  });
});
