// What a held payment asks of the merchant's relayer: one of the escrow's operator calls on its terms.
// Wire form (JSON-safe: amounts and expiries as decimal strings), like the token calls in relay.ts; the
// relayer builds the calldata itself, for its network's configured escrow only, after the checks in
// `escrowCallRefusal` (activities/relayCalls.ts).
import { encodeFunctionData, maxUint256, zeroAddress, type Address, type Hex } from 'viem';
import type { EscrowAddresses, PaymentInfo } from './escrow.js';
import { escrowAbi } from './escrowAbi.js';

/** `PaymentInfo` with every number a decimal string. */
export type WirePaymentInfo = { [K in keyof PaymentInfo]: PaymentInfo[K] extends bigint | number ? string : PaymentInfo[K] };

/**
 * The escrow's operator calls, and `allowRefunds`: the merchant key's one approval of the network's
 * operator refund collector (the escrow's `refund` pulls what goes back from the operator through it).
 */
export type EscrowAction = 'authorize' | 'capture' | 'void' | 'refund' | 'allowRefunds';

export interface EscrowCall {
  kind: 'escrow';
  action: EscrowAction;
  paymentInfo: WirePaymentInfo;
  /** Minor units: what to authorize, capture or refund (a void returns all that is held). */
  amount?: string;
  /** `authorize`: the payer's signature of the collector's ReceiveWithAuthorization. */
  signature?: Hex;
  /** `authorize`: the hold's EIP-3009 nonce (the terms' payer-agnostic hash; the relayer checks it). */
  nonce?: Hex;
  /**
   * The hold as the requester last knew it onchain: the relayer sends the call only while the escrow
   * says exactly this (at the pending block), so a capture or refund already landed (or in the pool)
   * is never sent twice, whatever either side forgot. Amounts in minor units.
   */
  expect?: { capturable?: string; refundable?: string };
}

export function toWire(info: PaymentInfo): WirePaymentInfo {
  return Object.fromEntries(Object.entries(info).map(([k, v]) => [k, typeof v === 'bigint' || typeof v === 'number' ? v.toString() : v])) as WirePaymentInfo;
}

export function fromWire(info: WirePaymentInfo): PaymentInfo {
  return {
    ...info,
    maxAmount: BigInt(info.maxAmount),
    preApprovalExpiry: Number(info.preApprovalExpiry),
    authorizationExpiry: Number(info.authorizationExpiry),
    refundExpiry: Number(info.refundExpiry),
    minFeeBps: Number(info.minFeeBps),
    maxFeeBps: Number(info.maxFeeBps),
    salt: BigInt(info.salt),
  };
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^(0|[1-9][0-9]{0,77})$/;
const SIGNATURE = /^0x(?:[0-9a-fA-F]{2})+$/;
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Why the relayer of `sender` will not send this escrow call, or undefined. The merchant key is the
 * payment's operator and its receiver (a capture pays the key that sends it, as a token capture does),
 * the token is the relayer's, no fee goes anywhere, and amounts are whole positive numbers.
 */
export function escrowCallRefusal(call: EscrowCall, sender: Address, token: Address): string | undefined {
  const info = call.paymentInfo;
  if (typeof info !== 'object' || info === null) return 'an escrow call carries its payment terms';
  for (const key of ['operator', 'payer', 'receiver', 'token', 'feeReceiver'] as const)
    if (typeof info[key] !== 'string' || !ADDRESS.test(info[key])) return `a payment's ${key} is an address`;
  for (const key of ['maxAmount', 'preApprovalExpiry', 'authorizationExpiry', 'refundExpiry', 'minFeeBps', 'maxFeeBps', 'salt'] as const)
    if (typeof info[key] !== 'string' || !UINT.test(info[key])) return `a payment's ${key} is a whole number`;
  if (!['authorize', 'capture', 'void', 'refund', 'allowRefunds'].includes(call.action))
    return `the escrow's operator calls are authorize, capture, void, refund and allowRefunds, not ${String(call.action)}`;
  if (!same(info.operator, sender)) return `an escrow call is sent by the payment's operator (${info.operator}), not ${sender}`;
  if (!same(info.receiver, sender)) return `a held payment pays the merchant key that operates it (${sender}), not ${info.receiver}`;
  if (!same(info.token, token)) return `the payment is in ${info.token}, not this relayer's token ${token}`;
  if (info.maxFeeBps !== '0' || !same(info.feeReceiver, zeroAddress)) return 'a held payment takes no fee';
  if (call.action !== 'void' && call.action !== 'allowRefunds' && (typeof call.amount !== 'string' || !UINT.test(call.amount) || call.amount === '0'))
    return `an escrow ${call.action} names a positive whole amount`;
  if (call.action === 'authorize' && (typeof call.signature !== 'string' || !SIGNATURE.test(call.signature)))
    return "an authorize carries the payer's signature";
  return undefined;
}

/** The transaction's calldata for a call `escrowCallRefusal` accepted (`allowRefunds` goes to the token). */
export function escrowCalldata(call: EscrowCall, addresses: EscrowAddresses): Hex {
  const info = fromWire(call.paymentInfo);
  switch (call.action) {
    case 'allowRefunds':
      return encodeFunctionData({ abi: tokenAllowanceAbi, functionName: 'approve', args: [addresses.refundCollector, maxUint256] });
    case 'authorize':
      return encodeFunctionData({ abi: escrowAbi, functionName: 'authorize', args: [info, BigInt(call.amount!), addresses.paymentCollector, call.signature!] });
    case 'capture':
      return encodeFunctionData({ abi: escrowAbi, functionName: 'capture', args: [info, BigInt(call.amount!), 0, zeroAddress] });
    case 'void':
      return encodeFunctionData({ abi: escrowAbi, functionName: 'void', args: [info] });
    case 'refund':
      return encodeFunctionData({ abi: escrowAbi, functionName: 'refund', args: [info, BigInt(call.amount!), addresses.refundCollector, '0x'] });
  }
}

/** The token's ERC-20 approval surface (the EIP-3009 ABI in tokenAbi.ts has none: only refunds through the escrow need it). */
export const tokenAllowanceAbi = [
  {
    type: 'function',
    name: 'allowance',
    stateMutability: 'view',
    inputs: [
      { name: 'owner', type: 'address' },
      { name: 'spender', type: 'address' },
    ],
    outputs: [{ name: '', type: 'uint256' }],
  },
  {
    type: 'event',
    name: 'Approval',
    inputs: [
      { name: 'owner', type: 'address', indexed: true },
      { name: 'spender', type: 'address', indexed: true },
      { name: 'value', type: 'uint256', indexed: false },
    ],
  },
  {
    type: 'function',
    name: 'approve',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'spender', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'bool' }],
  },
] as const;

/** An allowance at or past this is the merchant key's standing approval of the refund collector (transfers wear it down, never to below). */
export const REFUNDS_ALLOWED = 2n ** 255n;
