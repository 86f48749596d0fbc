// Refunds: the merchant key gives money back with the token's own EIP-3009 transferWithAuthorization,
// signed by itself, under a nonce derived from the refund's place. The token accepts a nonce once,
// so however often an attempt is retried, re-signed or rebroadcast, a refund can only ever pay once,
// and its AuthorizationUsed(merchant, nonce) log proves it the way a capture's log proves a capture.
import { ApplicationFailure } from '@temporalio/common';
import type { NonceStateRequest, RefundAttempt, RefundAttemptRequest } from '../domain/activityContract.js';
import { authorizationMessageValues, authorizationTypes, type AuthorizationMessage } from '../domain/eip3009.js';
import type { OnchainNonceFacts } from '../domain/facts.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';
import { heartbeat, untilNextBlock } from './heartbeat.js';
import { createNonceStateActivity } from './nonceState.js';
import { captureGasCost } from '../runtime/chain/captureGas.js';
import { isRevert } from '../runtime/chain/revert.js';
import { captureFailureFromRevert } from './revert.js';
import { captureCall } from './tokenCalls.js';
import { readTokenDomain } from './tokenDomain.js';
import { refundBackingCheck } from './relayCalls.js';
import { refundNonce } from './refundNonce.js';
import { landedTransfer } from './refundsOnchain.js';

export { refundNonce } from './refundNonce.js';

/** Without a record of where a refund was first signed, how far back its nonce's log is looked for. */
const LOG_LOOKBACK = 100_000n;
/** A reorg can put an attempt lower than the block it was signed at: its log is looked for this far below. */
const REORG_MARGIN = 256n;

export function createRefundActivities(ctx: ChainContext) {
  const readNonceState = createNonceStateActivity(ctx);
  const backing = refundBackingCheck(ctx);

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
    // Logs from where the refund was first signed; a first attempt has no earlier one to find.
    const fromBlock = request.fromBlock ?? (block.number !== null && block.number > LOG_LOOKBACK ? (block.number - LOG_LOOKBACK).toString() : '0');
    const onchain: OnchainNonceFacts = nonceConsumed ? await readNonceState({ authorizer: merchant.address, nonce, fromBlock }) : { status: 'unused' };
    // A landed nonce is this refund's only if it paid this payer exactly this amount. Otherwise its
    // place was taken by another refund (a ledger rewound by a reset, then asked again): this refund
    // did not happen, and following that log would report it succeeded for what the chain does not show.
    const takenBy = async (landed: OnchainNonceFacts): Promise<RefundAttempt['simulationFailure']> => {
      if (landed.status !== 'used') return null;
      const paid = await landedTransfer(ctx, merchant.address, nonce, landed.transactionHash);
      if (paid.to.toLowerCase() === request.payer.toLowerCase() && paid.value === BigInt(request.amountMinor)) return null;
      return {
        code: 'refund_sequence_taken',
        message:
          `refund ${request.sequence}'s nonce already moved ${paid.value} to ${paid.to} in ${landed.transactionHash}, ` +
          `not this refund's ${request.amountMinor} to ${request.payer}: nothing of this refund moved`,
      };
    };
    const facts = {
      chainTime: block.timestamp.toString(),
      blockNumber: (block.number !== null && block.number > REORG_MARGIN ? block.number - REORG_MARGIN : 0n).toString(),
      onchain,
      merchantBalance: merchantBalance.toString(),
      merchantGasBalance: merchantGasBalance.toString(),
      requiredGas: captureGasCost(block.baseFeePerGas).toString(),
      paused,
      merchantBlacklisted,
      payerBlacklisted,
    };
    if (onchain.status !== 'unused') return { nonce, facts, prepared: null, simulationFailure: await takenBy(onchain) };

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
    // The key signs a refund only once its capture backs it (the payer who paid, no more than paid
    // with the refunds the chain shows landed): the relayer checks the same before it sends.
    const refused = await backing.check(merchant.address, {
      authorization,
      refund: { authorizationRunId: request.authorizationRunId, sequence: request.sequence, captureTransactionHash: request.captureTransactionHash ?? null },
    });
    if (refused)
      return { nonce, facts, prepared: null, simulationFailure: { code: 'relay_refused', message: `the merchant key will not sign this refund: ${refused}` } };
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
        const landed = await readNonceState({ authorizer: merchant.address, nonce, fromBlock });
        if (landed.status !== 'unused') return { nonce, facts: { ...facts, onchain: landed }, prepared: null, simulationFailure: await takenBy(landed) };
      }
    }
    return { nonce, facts, prepared: { request: captureRequest }, simulationFailure };
  }

  /**
   * Until a block at the confirmation depth is past validBefore by its own clock: from there on no
   * block can hold the attempt (their timestamps only grow), reorgs within the depth included. What
   * that block says of the nonce is then final: unused (nothing moved, ever), or the log that used it.
   */
  async function awaitAuthorizationExpiry(request: NonceStateRequest & { validBefore: string }): Promise<OnchainNonceFacts> {
    const deadline = BigInt(request.validBefore);
    for (;;) {
      const seen = ctx.heads.head;
      const final = await finalBlock();
      if (final && final.timestamp >= deadline) {
        const consumed = await ctx.publicClient.readContract({
          address: ctx.tokenAddress,
          abi: tokenAbi,
          functionName: 'authorizationState',
          args: [request.authorizer, request.nonce],
          blockNumber: final.number,
        });
        return consumed ? readNonceState(request) : { status: 'unused' };
      }
      heartbeat();
      // Sleep most of the way on the wall clock, then follow blocks.
      const wait = final ? Number(deadline - final.timestamp) * 1000 - 2_000 : 0;
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 10_000)));
      else await untilNextBlock(ctx, seen);
    }
  }

  /** The newest block final by the configured rule (a depth, or the node's safe / finalized tag). */
  async function finalBlock(): Promise<{ number: bigint; timestamp: bigint } | undefined> {
    if (typeof ctx.confirmations !== 'number') {
      const block = await ctx.publicClient.getBlock({ blockTag: ctx.confirmations }).catch(() => undefined);
      return block?.number === null || block?.number === undefined ? undefined : { number: block.number, timestamp: block.timestamp };
    }
    const head = await ctx.publicClient.getBlockNumber({ cacheTime: 0 });
    if (head < BigInt(ctx.confirmations)) return undefined;
    const block = await ctx.publicClient.getBlock({ blockNumber: head - BigInt(ctx.confirmations) });
    return { number: block.number, timestamp: block.timestamp };
  }

  return { prepareRefund, awaitAuthorizationExpiry };
}
