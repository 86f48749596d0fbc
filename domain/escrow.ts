// A held payment's terms and identity, as Commerce Payments' AuthCaptureEscrow computes them, and the
// EIP-3009 authorization its payer signs to the ERC-3009 payment collector. Pure: no chain access.
import { encodeAbiParameters, keccak256, toHex, zeroAddress, type Address, type Hex } from 'viem';
import { paymentInfoComponents } from './escrowAbi.js';
import type { AuthorizationMessage } from './eip3009.js';

/** `AuthCaptureEscrow.PaymentInfo`: every term of one payment, all bound by the payer's signature. */
export interface PaymentInfo {
  operator: Address;
  payer: Address;
  receiver: Address;
  token: Address;
  maxAmount: bigint;
  preApprovalExpiry: number;
  authorizationExpiry: number;
  refundExpiry: number;
  minFeeBps: number;
  maxFeeBps: number;
  feeReceiver: Address;
  salt: bigint;
}

/** Where a network's escrow is: the escrow and the collectors authcap uses with it. */
export interface EscrowAddresses {
  escrow: Address;
  /** `ERC3009PaymentCollector`: what payers sign to. */
  paymentCollector: Address;
  /** `OperatorRefundCollector`: refunds come from the operator's (merchant key's) own balance. */
  refundCollector: Address;
}

export const PAYMENT_INFO_TYPEHASH = keccak256(
  toHex(
    'PaymentInfo(address operator,address payer,address receiver,address token,uint120 maxAmount,uint48 preApprovalExpiry,uint48 authorizationExpiry,uint48 refundExpiry,uint16 minFeeBps,uint16 maxFeeBps,address feeReceiver,uint256 salt)',
  ),
);

/** `getHash(paymentInfo)`: the payment's id on this chain and escrow, the key of its state and events. */
export function paymentInfoHash(info: PaymentInfo, chainId: number, escrow: Address): Hex {
  const structHash = keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'tuple', components: paymentInfoComponents }], [PAYMENT_INFO_TYPEHASH, info]));
  return keccak256(encodeAbiParameters([{ type: 'uint256' }, { type: 'address' }, { type: 'bytes32' }], [BigInt(chainId), escrow, structHash]));
}

/**
 * The EIP-3009 nonce a payer signs for this payment: its hash with the payer left out (the token binds
 * the payer as `from`). Every other term is in it, so none can change once signed.
 */
export function holdNonce(info: PaymentInfo, chainId: number, escrow: Address): Hex {
  return paymentInfoHash({ ...info, payer: zeroAddress }, chainId, escrow);
}

/**
 * The `ReceiveWithAuthorization` message the ERC-3009 collector redeems (wire form): to the collector,
 * the payment's `maxAmount`, valid from 0 until `preApprovalExpiry`, the hold's nonce.
 */
export function holdAuthorizationMessage(
  info: PaymentInfo,
  chainId: number,
  addresses: Pick<EscrowAddresses, 'escrow' | 'paymentCollector'>,
): AuthorizationMessage {
  return {
    from: info.payer,
    to: addresses.paymentCollector,
    value: info.maxAmount.toString(),
    validAfter: '0',
    validBefore: String(info.preApprovalExpiry),
    nonce: holdNonce(info, chainId, addresses.escrow),
  };
}

/** The fee the escrow takes of a capture of `amount` at `feeBps` (rounded down, as the contract does). */
export function feeOf(amount: bigint, feeBps: number): bigint {
  return (amount * BigInt(feeBps)) / 10_000n;
}
