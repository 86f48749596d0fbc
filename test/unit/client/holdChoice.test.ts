// Whether a new draft holds: the request's word, else the deployment's default for its token; a
// network without an escrow refuses a hold before anything starts.
import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { holdsFunds } from '../../../client/authorizations/holdChoice.js';
import { Catalog, type ServedToken } from '../../../runtime/deployment/catalog.js';

const USDC = '0x1111111111111111111111111111111111111111' as Address;
const DEUR = '0x2222222222222222222222222222222222222222' as Address;
const token = (address: Address, symbol: string, decimals: number): ServedToken => ({ address, name: symbol, version: '2', symbol, decimals, form: 'bytes' });
const escrow = { address: USDC, paymentCollector: USDC, refundCollector: USDC };
const catalog = new Catalog([
  { network: 'eip155:1', chainId: 1, name: 'one', tokens: [token(USDC, 'USDC', 6)] },
  { network: 'eip155:2', chainId: 2, name: 'two', tokens: [token(USDC, 'USDC', 6), token(DEUR, 'DEUR18', 18)], escrow: { ...escrow, holdsByDefault: [DEUR] } },
]);
const on = (network: string, address: Address) => ({ network, token: address, symbol: 'X', decimals: 6 });

describe('holdsFunds', () => {
  it("follows the request, else the deployment's default for the token", () => {
    expect(holdsFunds(catalog, undefined, on('eip155:2', DEUR))).toBe(true);
    expect(holdsFunds(catalog, undefined, on('eip155:2', USDC))).toBe(false);
    expect(holdsFunds(catalog, false, on('eip155:2', DEUR))).toBe(false);
    expect(holdsFunds(catalog, true, on('eip155:2', USDC))).toBe(true);
    expect(holdsFunds(catalog, undefined, on('eip155:1', USDC))).toBe(false);
  });

  it('refuses a hold where no escrow is configured, and a hold that is not true or false', () => {
    expect(() => holdsFunds(catalog, true, on('eip155:1', USDC))).toThrow(expect.objectContaining({ code: 'holds_not_available' }));
    expect(() => holdsFunds(catalog, 'yes', on('eip155:2', USDC))).toThrow(expect.objectContaining({ code: 'validation_error' }));
  });
});
