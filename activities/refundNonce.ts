// A refund's EIP-3009 nonce, derived from its place: the same for each of its attempts, different for
// every refund, so the token itself accepts each refund once.
import { keccak256, stringToHex, type Hex } from 'viem';

export function refundNonce(authorizationRunId: string, sequence: number): Hex {
  return keccak256(stringToHex(`authcap:refund:${authorizationRunId}:${sequence}`));
}
