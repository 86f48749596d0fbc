// The token calls authcap sends. An EOA's signature goes through the `v, r, s` overloads, which every
// FiatToken version has (v2.1 has only those); the `bytes signature` overloads (v2.2+) are used only
// for what needs them: ERC-1271 contract-wallet signatures.
import type { Address, Hex } from 'viem';
import type { CaptureRequest, CancelRequest } from '../domain/activityContract.js';
import { isEcdsaSignature, splitEcdsa } from '../domain/signature.js';
import { tokenAbi } from '../domain/tokenAbi.js';

function signatureArgs(signature: Hex): [number, Hex, Hex] | [Hex] {
  const split = isEcdsaSignature(signature) ? splitEcdsa(signature) : undefined;
  return split ? [split.v, split.r, split.s] : [signature];
}

/** receive… for ReceiveWithAuthorization (only we, the payee, can submit); transfer… for the other. */
export function captureCall(request: CaptureRequest, tokenAddress: Address) {
  const a = request.authorization;
  return {
    address: tokenAddress,
    abi: tokenAbi,
    functionName: request.primaryType === 'ReceiveWithAuthorization' ? 'receiveWithAuthorization' : 'transferWithAuthorization',
    args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, ...signatureArgs(request.signature)],
  } as const;
}

export function cancelCall(request: CancelRequest, tokenAddress: Address) {
  return {
    address: tokenAddress,
    abi: tokenAbi,
    functionName: 'cancelAuthorization',
    args: [request.authorizer, request.nonce, ...signatureArgs(request.signature)],
  } as const;
}
