import type { Hex } from 'viem';
import { authorizationMessageValues, authorizationTypes, type AuthorizationMessage, type AuthorizationPrimaryType, type TokenDomain } from '../domain/eip3009.js';
import type { SignatureCheck } from '../domain/facts.js';
import type { ChainContext } from './chainContext.js';

export function createVerifyActivity(ctx: ChainContext) {
  /**
   * Verifies against the exact typed data authcap will submit. The public client's verifyTypedData
   * falls back to ERC-1271 (and ERC-6492) when the payer is a contract wallet.
   */
  return async function verifyAuthorizationSignature(request: {
    domain: TokenDomain;
    primaryType: AuthorizationPrimaryType;
    authorization: AuthorizationMessage;
    signature: Hex;
  }): Promise<SignatureCheck> {
    let valid: boolean;
    try {
      valid = await ctx.publicClient.verifyTypedData({
        address: request.authorization.from,
        domain: { ...request.domain, chainId: request.domain.chainId },
        types: authorizationTypes,
        primaryType: request.primaryType,
        message: authorizationMessageValues(request.authorization),
        signature: request.signature,
      });
    } catch (err) {
      // Malformed signatures (wrong length, bad v) are a caller's mistake, not a chain failure.
      if (isSignatureFormatError(err)) valid = false;
      else throw err;
    }
    return valid
      ? { valid: true }
      : {
          valid: false,
          code: 'invalid_signature',
          reason: `the signature is not ${request.authorization.from}'s over this ${request.primaryType} authorization`,
        };
  };
}

function isSignatureFormatError(err: unknown): boolean {
  const name = (err as { name?: string })?.name ?? '';
  const message = (err as Error)?.message ?? '';
  return /Signature|InvalidLength|Hex|recovery|yParity/i.test(name) || /signature|invalid.*(length|size)|recovery/i.test(message);
}
