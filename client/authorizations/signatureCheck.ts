// A payer's signature (over the draft, or over its cancellation) is checked by the caller before it
// reaches the authorization's workflow: the payer's own ECDSA signature locally, anything else (a
// contract wallet's ERC-1271 or ERC-6492 signature) against the chain. Only signatures the chain
// accepts enter history, marked as checked, so a stranger holding the checkout link is answered
// `invalid_signature` here, however often, and spends nothing of the authorization's attempt budget:
// nobody can lock a payer out, contract wallets included. The workflow's validator still judges
// every signature it is handed (it trusts the mark only because the update is sealed by the codec).
import { createPublicClient, http, type Address, type Hex, type PublicClient } from 'viem';
import {
  authorizationMessageValues,
  authorizationTypes,
  cancelAuthorizationTypes,
  type AuthorizationMessage,
  type AuthorizationPrimaryType,
  type TokenDomain,
} from '../../domain/eip3009.js';
import { AuthcapError } from '../../domain/errors.js';
import { isSignatureFormatError } from '../../domain/signature.js';
import { ChainUnreachableError, chainAcceptsSignature } from '../../runtime/payerSignature.js';
import { authorizationDigest, cancelDigest } from '../../domain/signatureRecovery.js';
import { isPayerKeySignatureOf } from '../../runtime/secp256k1.js';

export type SignatureKind = 'signature' | 'cancel';

/** What a signature is about: the authorization as it stands. */
export interface SignedSubject {
  domain: TokenDomain;
  primaryType: AuthorizationPrimaryType;
  authorization: AuthorizationMessage;
}

/** `payer`: the payer's own key signed it; `chain`: the chain says the payer (a contract wallet) did. */
export type SignatureVerdict = 'payer' | 'chain';

export class SignatureChecker {
  private client?: PublicClient;

  constructor(private readonly rpcUrl: string) {}

  /** The verdict, or `invalid_signature` (nothing reaches Temporal), or `chain_unavailable` when the node cannot say. */
  async check(kind: SignatureKind, subject: SignedSubject, signature: Hex): Promise<SignatureVerdict> {
    const { domain, primaryType, authorization } = subject;
    const payer = authorization.from;
    const digest = kind === 'signature' ? authorizationDigest(domain, primaryType, authorization) : cancelDigest(domain, payer, authorization.nonce);
    if (isPayerKeySignatureOf(digest, signature, payer)) return 'payer';
    let valid: boolean;
    try {
      this.client ??= createPublicClient({ transport: http(this.rpcUrl, { timeout: 5_000, retryCount: 1 }) });
      valid = await chainAcceptsSignature(this.client, payer, typedData(kind, subject), signature);
    } catch (err) {
      if (err instanceof ChainUnreachableError)
        throw new AuthcapError('chain_unavailable', 'the chain node could not check this signature right now; retry shortly');
      if (isSignatureFormatError(err)) valid = false;
      else throw err;
    }
    if (!valid) {
      throw new AuthcapError(
        'invalid_signature',
        kind === 'signature'
          ? `the signature is not ${payer}'s over this ${primaryType} authorization`
          : `the cancellation is not signed by the payer ${payer}`,
      );
    }
    return 'chain';
  }
}

function typedData(kind: SignatureKind, { domain, primaryType, authorization }: SignedSubject) {
  const eip712Domain = { ...domain, chainId: Number(domain.chainId) };
  if (kind === 'cancel') {
    return {
      domain: eip712Domain,
      types: cancelAuthorizationTypes,
      primaryType: 'CancelAuthorization' as const,
      message: { authorizer: authorization.from as Address, nonce: authorization.nonce },
    };
  }
  return { domain: eip712Domain, types: authorizationTypes, primaryType, message: authorizationMessageValues(authorization) };
}
