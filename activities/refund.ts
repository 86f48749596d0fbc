// Refunds: the merchant key gives money back with the token's own EIP-3009 transferWithAuthorization,
// signed by itself, under a nonce derived from the refund's place. The token accepts a nonce once,
// so however often an attempt is retried, re-signed or rebroadcast, a refund can only ever pay once,
// and its AuthorizationUsed(merchant, nonce) log proves it the way a capture's log proves a capture.
import { ApplicationFailure } from '@temporalio/common';
import { encodeFunctionData, keccak256, stringToHex, type Hex } from 'viem';
import type { NonceStateRequest, RefundAttempt, RefundAttemptRequest } from '../domain/activityContract.js';
import { authorizationMessageValues, authorizationTypes, type AuthorizationMessage } from '../domain/eip3009.js';
import type { OnchainNonceFacts } from '../domain/facts.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';
import { heartbeat, untilNextBlock } from './heartbeat.js';
import { createNonceStateActivity } from './nonceState.js';
import { CAPTURE_GAS_LIMIT, PRIORITY_FEE_ALLOWANCE } from './precheck.js';
import { captureFailureFromRevert, isRevert } from './revert.js';
import { captureCall } from './tokenCalls.js';
import { readTokenDomain } from './tokenDomain.js';

/** The refund's EIP-3009 nonce: the same for each of its attempts, different for every refund. */
export function refundNonce(authorizationRunId: string, sequence: number): Hex {
  return keccak256(stringToHex(`authcap:refund:${authorizationRunId}:${sequence}`));
}

export function createRefundActivities(ctx: ChainContext) {
  const readNonceState = createNonceStateActivity(ctx);

  async function prepareRefund(request: RefundAttemptRequest): Promise<RefundAttempt> {
    const nonce = refundNonce(request.authorizationRunId, request.sequence);
    if (!ctx.isMerchant(request.merchant)) {
      // Every worker must hold every merchant key that ever received a capture: retrying cannot help.
      throw ApplicationFailure.create({
        type: 'internal_error',
        nonRetryable: true,
        message: `the merchant key ${request.merchant} that received this capture is not configured on this worker (MERCHANT_PRIVATE_KEYS)`,
      });
    }
    const merchant = ctx.accountFor(request.merchant);
    const token = { address: ctx.tokenAddress, abi: tokenAbi } as const;
    // One view of the pending state: the nonce, the merchant's balance and the token's policy in one
    // eth_call (a deployless multicall), beside the pending block and the merchant's gas balance.
    const [reads, block, merchantGasBalance, domain] = await Promise.all([
      ctx.publicClient.multicall({
        contracts: [
          { ...token, functionName: 'authorizationState', args: [merchant.address, nonce] },
          { ...token, functionName: 'balanceOf', args: [merchant.address] },
          { ...token, functionName: 'paused' },
          { ...token, functionName: 'isBlacklisted', args: [merchant.address] },
          { ...token, functionName: 'isBlacklisted', args: [request.payer] },
        ],
        allowFailure: false,
        deployless: true,
        blockTag: 'pending',
      }),
      ctx.publicClient.getBlock({ blockTag: 'pending' }),
      ctx.publicClient.getBalance({ address: merchant.address, blockTag: 'pending' }),
      readTokenDomain(ctx),
    ]);
    const [nonceConsumed, merchantBalance, paused, merchantBlacklisted, payerBlacklisted] = reads;
    // An earlier attempt landed (this is a retry after a crash, say): its log says where.
    const onchain: OnchainNonceFacts = nonceConsumed ? await readNonceState({ authorizer: merchant.address, nonce }) : { status: 'unused' };
    const maxFeePerGas = (block.baseFeePerGas ?? 0n) * 2n + PRIORITY_FEE_ALLOWANCE;
    const facts = {
      chainTime: block.timestamp.toString(),
      onchain,
      merchantBalance: merchantBalance.toString(),
      merchantGasBalance: merchantGasBalance.toString(),
      requiredGas: (CAPTURE_GAS_LIMIT * maxFeePerGas).toString(),
      paused,
      merchantBlacklisted,
      payerBlacklisted,
    };
    if (onchain.status !== 'unused') return { nonce, facts, prepared: null, simulationFailure: null };

    // Short-lived on purpose: an attempt that cannot land soon is better signed again (same nonce)
    // than left valid, and one that reverted is dead, and reported failed, once its window closes.
    const authorization: AuthorizationMessage = {
      from: merchant.address,
      to: request.payer,
      value: request.amountMinor,
      validAfter: '0',
      validBefore: String(block.timestamp + BigInt(ctx.refundValiditySeconds)),
      nonce,
    };
    const signature = await merchant.signTypedData({
      domain: { ...domain, chainId: Number(domain.chainId) },
      types: { TransferWithAuthorization: authorizationTypes.TransferWithAuthorization },
      primaryType: 'TransferWithAuthorization',
      message: authorizationMessageValues(authorization),
    });
    const captureRequest = { primaryType: 'TransferWithAuthorization' as const, authorization, signature };
    const call = captureCall(captureRequest, ctx.tokenAddress);
    let simulationFailure: RefundAttempt['simulationFailure'] = null;
    try {
      await ctx.publicClient.simulateContract({ ...call, account: merchant.address, blockTag: 'pending' });
    } catch (err) {
      if (!isRevert(err)) throw err;
      simulationFailure = captureFailureFromRevert(err);
      // Used between the two reads (an earlier attempt of this very refund landed in the block just
      // sealed): the log says where, and the refund follows it instead of failing.
      if (simulationFailure.code === 'nonce_already_used') {
        const landed = await readNonceState({ authorizer: merchant.address, nonce });
        if (landed.status !== 'unused') return { nonce, facts: { ...facts, onchain: landed }, prepared: null, simulationFailure: null };
      }
    }
    const data = encodeFunctionData({ abi: call.abi, functionName: call.functionName, args: call.args });
    return {
      nonce,
      facts,
      prepared: { request: captureRequest, transaction: { to: ctx.tokenAddress, data, gas: CAPTURE_GAS_LIMIT.toString() } },
      simulationFailure,
    };
  }

  /** Until the chain's own clock passes validBefore: only then is an unused nonce's signature dead. */
  async function awaitAuthorizationExpiry(request: NonceStateRequest & { validBefore: string }): Promise<OnchainNonceFacts> {
    const deadline = BigInt(request.validBefore);
    for (;;) {
      const seen = ctx.heads.head;
      const head = await ctx.publicClient.getBlock({ blockTag: 'latest' });
      if (head.timestamp >= deadline) return readNonceState(request);
      heartbeat();
      // Sleep most of the way on the wall clock, then follow blocks.
      const wait = Number(deadline - head.timestamp) * 1000 - 2_000;
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 10_000)));
      else await untilNextBlock(ctx, seen);
    }
  }

  return { prepareRefund, awaitAuthorizationExpiry };
}
