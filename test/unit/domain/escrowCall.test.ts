import { describe, expect, it } from 'vitest';
import { decodeFunctionData, getAddress, zeroAddress } from 'viem';
import { escrowCalldata, escrowCallRefusal, fromWire, toWire, type EscrowCall } from '../../../domain/escrowCall.js';
import { escrowAbi } from '../../../domain/escrowAbi.js';
import { holdTerms } from '../../../domain/hold.js';

const merchant = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const token = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const terms = holdTerms({
  operator: merchant,
  receiver: merchant,
  payer: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
  token,
  amount: 10_000_000n,
  authorizeBy: 1_800_000_000,
  authorizationId: 'order-1',
});
const addresses = {
  escrow: '0x0000000000000000000000000000000000000e5c',
  paymentCollector: '0x0000000000000000000000000000000000000c01',
  refundCollector: '0x0000000000000000000000000000000000000c02',
} as const;
const call = (overrides: Partial<EscrowCall> = {}, info: Partial<ReturnType<typeof toWire>> = {}): EscrowCall => ({
  kind: 'escrow',
  action: 'capture',
  paymentInfo: { ...toWire(terms), ...info },
  amount: '3000000',
  ...overrides,
});

describe('an escrow call for the relayer', () => {
  it('survives the wire unchanged', () => {
    expect(fromWire(toWire(terms))).toEqual(terms);
    expect(JSON.parse(JSON.stringify(toWire(terms)))).toEqual(toWire(terms));
  });

  it('is built into the escrow call it names, with the configured collectors and no fee', () => {
    const decode = (c: EscrowCall) => decodeFunctionData({ abi: escrowAbi, data: escrowCalldata(c, addresses) });
    expect(decode(call())).toMatchObject({ functionName: 'capture', args: [terms, 3_000_000n, 0, zeroAddress] });
    expect(decode(call({ action: 'authorize', amount: '10000000', signature: '0xabcd' }))).toMatchObject({
      functionName: 'authorize',
      args: [terms, 10_000_000n, getAddress(addresses.paymentCollector), '0xabcd'],
    });
    expect(decode(call({ action: 'void', amount: undefined }))).toMatchObject({ functionName: 'void', args: [terms] });
    expect(decode(call({ action: 'refund', amount: '1' }))).toMatchObject({
      functionName: 'refund',
      args: [terms, 1n, getAddress(addresses.refundCollector), '0x'],
    });
  });

  it('is sent only by its operator, for its own token, paying the merchant key, with no fee', () => {
    expect(escrowCallRefusal(call(), merchant, token)).toBeUndefined();
    const stranger = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
    expect(escrowCallRefusal(call(), stranger, token)).toMatch(/sent by the payment's operator/);
    expect(escrowCallRefusal(call({}, { receiver: stranger }), merchant, token)).toMatch(/pays the merchant key/);
    expect(escrowCallRefusal(call(), merchant, stranger)).toMatch(/not this relayer's token/);
    expect(escrowCallRefusal(call({}, { maxFeeBps: '100' }), merchant, token)).toMatch(/no fee/);
    expect(escrowCallRefusal(call({}, { feeReceiver: stranger }), merchant, token)).toMatch(/no fee/);
  });

  it('refuses malformed terms, amounts and actions before any calldata is made', () => {
    expect(escrowCallRefusal(call({ amount: '0' }), merchant, token)).toMatch(/positive whole amount/);
    expect(escrowCallRefusal(call({ amount: '-1' }), merchant, token)).toMatch(/positive whole amount/);
    expect(escrowCallRefusal(call({ action: 'authorize', amount: '1' }), merchant, token)).toMatch(/payer's signature/);
    expect(escrowCallRefusal(call({ action: 'reclaim' as never }), merchant, token)).toMatch(/not reclaim/);
    expect(escrowCallRefusal(call({}, { salt: '0x01' }), merchant, token)).toMatch(/salt is a whole number/);
    expect(escrowCallRefusal(call({}, { payer: 'nobody' as never }), merchant, token)).toMatch(/payer is an address/);
    expect(escrowCallRefusal(call({ paymentInfo: null as never }), merchant, token)).toMatch(/carries its payment terms/);
  });
});
