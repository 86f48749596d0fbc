// The external interface of Commerce Payments' AuthCaptureEscrow (base/commerce-payments v1.0) and its
// ERC-3009 payment and operator refund collectors that authcap relies on, as a typed `as const` ABI.
// Our own contracts in contracts/escrow implement exactly this surface, so the same code runs against
// the escrow deployed on Base and Base Sepolia.

export const paymentInfoComponents = [
  { name: 'operator', type: 'address' },
  { name: 'payer', type: 'address' },
  { name: 'receiver', type: 'address' },
  { name: 'token', type: 'address' },
  { name: 'maxAmount', type: 'uint120' },
  { name: 'preApprovalExpiry', type: 'uint48' },
  { name: 'authorizationExpiry', type: 'uint48' },
  { name: 'refundExpiry', type: 'uint48' },
  { name: 'minFeeBps', type: 'uint16' },
  { name: 'maxFeeBps', type: 'uint16' },
  { name: 'feeReceiver', type: 'address' },
  { name: 'salt', type: 'uint256' },
] as const;

const paymentInfo = { name: 'paymentInfo', type: 'tuple', components: paymentInfoComponents } as const;
const paymentInfoHash = { name: 'paymentInfoHash', type: 'bytes32', indexed: true } as const;
const collected = [
  { name: 'amount', type: 'uint256' },
  { name: 'tokenCollector', type: 'address' },
  { name: 'collectorData', type: 'bytes' },
] as const;
const fee = [
  { name: 'feeBps', type: 'uint16' },
  { name: 'feeReceiver', type: 'address' },
] as const;
const uint48 = (name: string) => ({ name, type: 'uint48' }) as const;

export const escrowAbi = [
  { type: 'function', name: 'authorize', stateMutability: 'nonpayable', inputs: [paymentInfo, ...collected], outputs: [] },
  {
    type: 'function',
    name: 'capture',
    stateMutability: 'nonpayable',
    inputs: [paymentInfo, { name: 'amount', type: 'uint256' }, ...fee],
    outputs: [],
  },
  { type: 'function', name: 'charge', stateMutability: 'nonpayable', inputs: [paymentInfo, ...collected, ...fee], outputs: [] },
  { type: 'function', name: 'void', stateMutability: 'nonpayable', inputs: [paymentInfo], outputs: [] },
  { type: 'function', name: 'reclaim', stateMutability: 'nonpayable', inputs: [paymentInfo], outputs: [] },
  { type: 'function', name: 'refund', stateMutability: 'nonpayable', inputs: [paymentInfo, ...collected], outputs: [] },
  { type: 'function', name: 'getHash', stateMutability: 'view', inputs: [paymentInfo], outputs: [{ type: 'bytes32' }] },
  {
    type: 'function',
    name: 'getTokenStore',
    stateMutability: 'view',
    inputs: [{ name: 'operator', type: 'address' }],
    outputs: [{ type: 'address' }],
  },
  {
    type: 'function',
    name: 'paymentState',
    stateMutability: 'view',
    inputs: [{ name: 'paymentInfoHash', type: 'bytes32' }],
    outputs: [
      { name: 'hasCollectedPayment', type: 'bool' },
      { name: 'capturableAmount', type: 'uint120' },
      { name: 'refundableAmount', type: 'uint120' },
    ],
  },
  { type: 'function', name: 'PAYMENT_INFO_TYPEHASH', stateMutability: 'view', inputs: [], outputs: [{ type: 'bytes32' }] },
  {
    type: 'event',
    name: 'PaymentAuthorized',
    inputs: [paymentInfoHash, paymentInfo, { name: 'amount', type: 'uint256' }, { name: 'tokenCollector', type: 'address' }],
  },
  {
    type: 'event',
    name: 'PaymentCharged',
    inputs: [paymentInfoHash, paymentInfo, { name: 'amount', type: 'uint256' }, { name: 'tokenCollector', type: 'address' }, ...fee],
  },
  { type: 'event', name: 'PaymentCaptured', inputs: [paymentInfoHash, { name: 'amount', type: 'uint256' }, ...fee] },
  { type: 'event', name: 'PaymentVoided', inputs: [paymentInfoHash, { name: 'amount', type: 'uint256' }] },
  { type: 'event', name: 'PaymentReclaimed', inputs: [paymentInfoHash, { name: 'amount', type: 'uint256' }] },
  {
    type: 'event',
    name: 'PaymentRefunded',
    inputs: [paymentInfoHash, { name: 'amount', type: 'uint256' }, { name: 'tokenCollector', type: 'address' }],
  },
  {
    type: 'event',
    name: 'TokenStoreCreated',
    inputs: [
      { name: 'operator', type: 'address', indexed: true },
      { name: 'tokenStore', type: 'address' },
    ],
  },
  {
    type: 'error',
    name: 'InvalidSender',
    inputs: [
      { name: 'sender', type: 'address' },
      { name: 'expected', type: 'address' },
    ],
  },
  { type: 'error', name: 'ZeroAmount', inputs: [] },
  {
    type: 'error',
    name: 'AmountOverflow',
    inputs: [
      { name: 'amount', type: 'uint256' },
      { name: 'limit', type: 'uint256' },
    ],
  },
  {
    type: 'error',
    name: 'ExceedsMaxAmount',
    inputs: [
      { name: 'amount', type: 'uint256' },
      { name: 'maxAmount', type: 'uint256' },
    ],
  },
  { type: 'error', name: 'AfterPreApprovalExpiry', inputs: [uint48('timestamp'), uint48('expiry')] },
  { type: 'error', name: 'InvalidExpiries', inputs: [uint48('preApproval'), uint48('authorization'), uint48('refund')] },
  { type: 'error', name: 'FeeBpsOverflow', inputs: [{ name: 'feeBps', type: 'uint16' }] },
  {
    type: 'error',
    name: 'InvalidFeeBpsRange',
    inputs: [
      { name: 'minFeeBps', type: 'uint16' },
      { name: 'maxFeeBps', type: 'uint16' },
    ],
  },
  {
    type: 'error',
    name: 'FeeBpsOutOfRange',
    inputs: [
      { name: 'feeBps', type: 'uint16' },
      { name: 'minFeeBps', type: 'uint16' },
      { name: 'maxFeeBps', type: 'uint16' },
    ],
  },
  { type: 'error', name: 'ZeroFeeReceiver', inputs: [] },
  {
    type: 'error',
    name: 'InvalidFeeReceiver',
    inputs: [
      { name: 'attempted', type: 'address' },
      { name: 'expected', type: 'address' },
    ],
  },
  { type: 'error', name: 'InvalidCollectorForOperation', inputs: [] },
  { type: 'error', name: 'TokenCollectionFailed', inputs: [] },
  { type: 'error', name: 'PaymentAlreadyCollected', inputs: [{ name: 'paymentInfoHash', type: 'bytes32' }] },
  { type: 'error', name: 'AfterAuthorizationExpiry', inputs: [uint48('timestamp'), uint48('expiry')] },
  {
    type: 'error',
    name: 'InsufficientAuthorization',
    inputs: [
      { name: 'paymentInfoHash', type: 'bytes32' },
      { name: 'authorizedAmount', type: 'uint256' },
      { name: 'requestedAmount', type: 'uint256' },
    ],
  },
  { type: 'error', name: 'ZeroAuthorization', inputs: [{ name: 'paymentInfoHash', type: 'bytes32' }] },
  { type: 'error', name: 'BeforeAuthorizationExpiry', inputs: [uint48('timestamp'), uint48('expiry')] },
  { type: 'error', name: 'AfterRefundExpiry', inputs: [uint48('timestamp'), uint48('expiry')] },
  {
    type: 'error',
    name: 'RefundExceedsCapture',
    inputs: [
      { name: 'refund', type: 'uint256' },
      { name: 'captured', type: 'uint256' },
    ],
  },
  { type: 'error', name: 'Reentrancy', inputs: [] },
] as const;

/** What the escrow asks of a collector; authcap reads it to check a configured address is the kind it names. */
export const tokenCollectorAbi = [
  { type: 'function', name: 'collectorType', stateMutability: 'view', inputs: [], outputs: [{ type: 'uint8' }] },
  { type: 'function', name: 'authCaptureEscrow', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] },
] as const;

/** `TokenCollector.CollectorType`. */
export const CollectorType = { Payment: 0, Refund: 1 } as const;
