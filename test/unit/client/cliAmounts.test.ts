// The CLI's tables show amounts as people read them, in the token's units.
import { describe, expect, it } from 'vitest';
import { listAmounts, minorToTokenUnits, tokenUnits } from '../../../client/cliAmounts.js';
import type { AuthorizationSummary } from '../../../client/authorizations/types.js';

const usdc = { symbol: 'USDC', decimals: 6 };
const deur = { symbol: 'DEUR18', decimals: 18 };

describe('amounts in token units', () => {
  it.each([
    ['12.5', '12.50 USDC'],
    ['3', '3.00 USDC'],
    ['0.000001', '0.000001 USDC'],
    ['1000000', '1000000.00 USDC'],
  ])('%s → %s', (amount, shown) => expect(tokenUnits(amount, usdc)).toBe(shown));

  it('without a token the amount is shown as given, and a missing amount stays missing', () => {
    expect(tokenUnits('12.5', undefined)).toBe('12.5');
    expect(tokenUnits(undefined, usdc)).toBeUndefined();
    expect(tokenUnits(null, usdc)).toBeUndefined();
  });

  it.each([
    ['12500000', usdc, '12.50 USDC'],
    ['1', usdc, '0.000001 USDC'],
    ['0', usdc, '0.00 USDC'],
    ['1', deur, '0.000000000000000001 DEUR18'],
    ['123450000000000000000', deur, '123.45 DEUR18'],
  ])('minor %s → %s', (minor, token, shown) => expect(minorToTokenUnits(minor, token)).toBe(shown));

  it('a list page reads each distinct token once, and falls back to minor units when it cannot', async () => {
    const row = (id: string, token: string | null, amountMinor: string | null): AuthorizationSummary => ({
      id,
      orderId: id,
      state: 'stored',
      payer: null,
      amountMinor,
      validBefore: null,
      createdAt: '',
      network: 'eip155:1',
      token,
    });
    const reads: string[] = [];
    const authorizations = {
      get: async (id: string) => {
        reads.push(id);
        if (id === 'c') throw new Error('gone');
        return { token: id === 'a' ? usdc : deur } as never;
      },
    };
    const rows = [row('a', '0xa', '1500000'), row('a2', '0xa', '2000000'), row('b', '0xb', '5'), row('c', '0xc', '7'), row('d', '0xd', null)];
    const amounts = await listAmounts(authorizations, rows);
    expect(Object.fromEntries(amounts)).toEqual({
      a: '1.50 USDC',
      a2: '2.00 USDC',
      b: '0.000000000000000005 DEUR18',
      c: '7 (minor units)',
    });
    expect(reads).toEqual(['a', 'b', 'c']);
  });
});
