// Relaying a payer's cancellation: the merchant alone cannot cancel onchain (spec rule 2), but it
// can submit the payer's CancelAuthorization signature and pay the gas.
import { recoverAddress } from '../runtime/secp256k1.js';
import { parseEventLogs, hashTypedData, type Hex, type PublicClient } from 'viem';
import { sameAddress } from '../domain/address.js';
import { isEcdsaSignature, isSignatureFormatError } from '../domain/signature.js';
import { chainAcceptsSignature } from '../runtime/payerSignature.js';
import type { CancelConfirmation, CancelRequest, PrepareResult } from '../domain/activityContract.js';
import { cancelAuthorizationTypes, type TokenDomain } from '../domain/eip3009.js';
import type { SignatureCheck } from '../domain/facts.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';
import { waitForDepth, waitForReceipt } from './heartbeat.js';
import { createNonceStateActivity } from './nonceState.js';
import { isRevert } from '../runtime/chain/revert.js';
import { cancelFailureFromRevert } from './revert.js';
import { cancelCall } from './tokenCalls.js';

export function createCancelActivities(ctx: ChainContext) {
  const readNonceState = createNonceStateActivity(ctx);
  const call = (request: CancelRequest) => cancelCall(request, ctx.tokenAddress);

  async function verifyCancelSignature(request: CancelRequest & { domain: TokenDomain }): Promise<SignatureCheck> {
    const typedData = {
      domain: { ...request.domain, chainId: Number(request.domain.chainId) },
      types: cancelAuthorizationTypes,
      primaryType: 'CancelAuthorization' as const,
      message: { authorizer: request.authorizer, nonce: request.nonce },
    };
    let valid = false;
    try {
      const signer = isEcdsaSignature(request.signature) ? recoverAddress(hashTypedData(typedData), request.signature) : undefined;
      // The payer's own key (no node call); else the chain (a contract wallet), whose silence throws.
      valid = signer !== undefined && sameAddress(signer, request.authorizer);
      if (!valid) valid = await chainAcceptsSignature(ctx.publicClient as PublicClient, request.authorizer, typedData, request.signature);
    } catch (err) {
      if (!isSignatureFormatError(err)) throw err;
    }
    return valid ? { valid: true } : { valid: false, code: 'invalid_signature', reason: `the cancellation is not signed by the payer ${request.authorizer}` };
  }

  async function prepareCancel(request: CancelRequest): Promise<PrepareResult> {
    const onchain = await readNonceState({ authorizer: request.authorizer, nonce: request.nonce });
    if (onchain.status !== 'unused') return { status: 'consumed', onchain };
    try {
      await ctx.publicClient.simulateContract({ ...call(request), account: ctx.merchant, blockTag: 'pending' });
    } catch (err) {
      if (isRevert(err)) return { status: 'failed', failure: cancelFailureFromRevert(err) };
      throw err;
    }
    return { status: 'ready' };
  }

  async function awaitCancelConfirmation(request: CancelRequest & { transactionHash: Hex }): Promise<CancelConfirmation> {
    const receipt = await waitForReceipt(ctx, request.transactionHash);
    if (receipt.status === 'reverted') {
      return { status: 'failed', failure: { code: 'capture_reverted', message: `cancellation ${request.transactionHash} reverted` } };
    }
    const canceled = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'AuthorizationCanceled' }).find(
      (log) => log.args.nonce.toLowerCase() === request.nonce.toLowerCase(),
    );
    if (!canceled) {
      return { status: 'failed', failure: { code: 'capture_reverted', message: 'the cancellation emitted no AuthorizationCanceled log' } };
    }
    await waitForDepth(ctx, receipt.blockNumber);
    return { status: 'confirmed', transactionHash: receipt.transactionHash, blockNumber: receipt.blockNumber.toString() };
  }

  return { verifyCancelSignature, prepareCancel, awaitCancelConfirmation };
}
