import { hashTypedData, type Hex, type PublicClient } from 'viem';
import { chainAcceptsSignature } from '../runtime/payerSignature.js';
import { isSignatureOf } from '../runtime/secp256k1.js';
import {
  authorizationMessageValues,
  authorizationTypes,
  type AuthorizationMessage,
  type AuthorizationPrimaryType,
  type TokenDomain,
} from '../domain/eip3009.js';
import type { SignatureCheck } from '../domain/facts.js';
import { isEcdsaSignature, isSignatureFormatError } from '../domain/signature.js';
import type { ChainContext } from './chainContext.js';
import { tokenChecksContractWalletSignatures } from './tokenFeatures.js';

export function createVerifyActivity(ctx: ChainContext) {
  /**
   * Verifies against the exact typed data authcap will submit. The payer's own ECDSA signature (an
   * EOA, nearly every payment) is checked here, with no node call; anything else goes to the public
   * client's verifyTypedData, which asks the chain (ERC-1271, ERC-6492) for a contract wallet.
   */
  return async function verifyAuthorizationSignature(request: {
    domain: TokenDomain;
    primaryType: AuthorizationPrimaryType;
    authorization: AuthorizationMessage;
    signature: Hex;
  }): Promise<SignatureCheck> {
    const typedData = {
      domain: { ...request.domain, chainId: request.domain.chainId },
      types: authorizationTypes,
      primaryType: request.primaryType,
      message: authorizationMessageValues(request.authorization),
      signature: request.signature,
    };
    // Every token version checks an EOA's signature by ecrecover: the same check, done locally.
    if (signedByPayerKey(typedData, request.authorization.from)) return { valid: true };
    let valid: boolean;
    try {
      // A node that cannot be asked throws (the activity retries), never reads as an invalid signature.
      const { signature, ...definition } = typedData;
      valid = await chainAcceptsSignature(ctx.publicClient as PublicClient, request.authorization.from, definition, signature);
    } catch (err) {
      // Malformed signatures (wrong length, bad v) are a caller's mistake, not a chain failure.
      if (isSignatureFormatError(err)) valid = false;
      else throw err;
    }
    if (!valid) {
      return {
        valid: false,
        code: 'invalid_signature',
        reason: `the signature is not ${request.authorization.from}'s over this ${request.primaryType} authorization`,
      };
    }
    // Valid, but not the payer's own ECDSA signature: a contract wallet vouched for it (ERC-1271).
    // The token must be able to ask the wallet too, or the capture is refused onchain later.
    if (!(await tokenChecksContractWalletSignatures(ctx))) {
      return {
        valid: false,
        code: 'contract_wallet_unsupported',
        reason:
          `${request.authorization.from} is a contract wallet (ERC-1271), and the token ${ctx.tokenAddress} cannot check its ` +
          'signatures onchain (no bytes-signature overloads, as in FiatToken v2.1): pay from an ordinary account (EOA)',
      };
    }
    return { valid: true };
  };
}

/** True when the signature is `from`'s own ECDSA signature (an EOA), which every token version checks. */
function signedByPayerKey(typedData: Parameters<typeof hashTypedData>[0] & { signature: Hex }, from: Hex): boolean {
  const { signature, ...definition } = typedData;
  // Not an ECDSA signature of any key (a v the curve does not know): a wallet's own format.
  return isEcdsaSignature(signature) && isSignatureOf(hashTypedData(definition), signature, from);
}
