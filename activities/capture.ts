// Following a signed transfer that is already on the chain into a block and to the confirmation depth,
// without sending anything: a refund's attempt found landed after a crash, or by its attempt's
// expiry (workflows/refundProcedure.ts). Captures and new refund attempts are sent and followed in
// one activity (activities/captureOnchain.ts).
import type { Hex, TransactionReceipt } from 'viem';
import type { CaptureConfirmation, CaptureInclusion, CaptureRequest } from '../domain/activityContract.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';
import { authorizationUsedTopic, nonceTopics } from './nonceState.js';
import { isRevert } from '../runtime/chain/revert.js';
import { captureFailureFromRevert } from './revert.js';
import { untilNextBlock, waitForDepth, waitForReceipt } from './heartbeat.js';
import { captureCall } from './tokenCalls.js';
import { pendingNonceLog } from './pendingNonceLog.js';

export function createCaptureActivities(ctx: ChainContext) {
  /**
   * Waits for the capture to show: its AuthorizationUsed log in the `pending` (preconfirmed) view,
   * about 200 ms after submission on a Flashblocks chain, or a receipt saying it reverted.
   */
  async function awaitCaptureInclusion(request: CaptureRequest & { transactionHash: Hex }): Promise<CaptureInclusion> {
    const { from, nonce } = request.authorization;
    const start = ctx.heads.head ?? (await ctx.publicClient.getBlockNumber({ cacheTime: 0 }));
    // A few blocks back covers a capture mined between our submission and this first look.
    const fromBlock = start > 8n ? start - 8n : 0n;
    for (;;) {
      const seen = ctx.heads.head;
      // The receipt first: once it exists its logs are the definitive answer. Reading logs first
      // would race a block sealed between the two calls.
      const receipt = await ctx.publicClient.getTransactionReceipt({ hash: request.transactionHash }).catch(() => undefined);
      if (receipt?.status === 'reverted') return { status: 'failed', failure: await explainRevert(request, receipt) };
      if (receipt) {
        const used = receipt.logs.find(
          (log) =>
            log.address.toLowerCase() === ctx.tokenAddress.toLowerCase() &&
            log.topics[0] === authorizationUsedTopic &&
            log.topics[2]?.toLowerCase() === nonce.toLowerCase(),
        );
        if (!used) return { status: 'failed', failure: { code: 'capture_reverted', message: 'the capture transaction emitted no AuthorizationUsed log' } };
        return { status: 'included', transactionHash: receipt.transactionHash, blockNumber: receipt.blockNumber.toString(), blockHash: receipt.blockHash };
      }
      // Not mined (or replaced under a new hash): the preconfirmed view shows the log of whichever lands.
      // The payer canceled (or someone consumed the nonce) while ours waited: ours can never land.
      const found = await pendingNonceLog(ctx, from, nonce, fromBlock);
      if (found) return found;
      // Past validBefore by block time nothing can land any more: stop waiting, the window decides.
      if (Date.now() / 1000 > Number(request.authorization.validBefore)) {
        const head = await ctx.publicClient.getBlock({ blockTag: 'latest' });
        if (head.timestamp >= BigInt(request.authorization.validBefore)) {
          const stillUnused = !(await ctx.publicClient.readContract({
            address: ctx.tokenAddress,
            abi: tokenAbi,
            functionName: 'authorizationState',
            args: [from, nonce],
          }));
          if (stillUnused)
            return {
              status: 'failed',
              failure: { code: 'authorization_expired', message: `the capture was not mined before validBefore ${request.authorization.validBefore}` },
            };
        }
      }
      // Look again when the next block is announced; the pending view is re-read at the polling interval.
      await Promise.race([untilNextBlock(ctx, seen), new Promise((r) => setTimeout(r, ctx.pollingIntervalMs))]);
    }
  }

  /** Waits for the confirmation depth, then reads the log back: a reorg shows as a moved or missing log. */
  async function awaitCaptureConfirmation(request: CaptureRequest & { transactionHash: Hex; blockHash: Hex }): Promise<CaptureConfirmation> {
    const { from, nonce } = request.authorization;
    const receipt = await waitForReceipt(ctx, request.transactionHash);
    await waitForDepth(ctx, receipt.blockNumber);
    const logs = await ctx.logs.getLogs({
      address: ctx.tokenAddress,
      topics: nonceTopics(from, nonce),
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
    });
    const log = logs.find((l) => !l.removed && l.transactionHash === request.transactionHash && l.topics[0] === authorizationUsedTopic);
    if (!log?.blockHash || log.blockNumber === null || log.blockHash !== receipt.blockHash) return { status: 'reorged' };
    return { status: 'confirmed', transactionHash: request.transactionHash, blockNumber: log.blockNumber.toString(), blockHash: log.blockHash };
  }

  /** Replays the call on the parent block's state to learn why the mined transaction reverted. */
  async function explainRevert(request: CaptureRequest, receipt: TransactionReceipt) {
    const call = captureCall(request, ctx.tokenAddress);
    const block = await ctx.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    if (block.timestamp >= BigInt(request.authorization.validBefore)) {
      return { code: 'authorization_expired' as const, message: `the capture landed at block time ${block.timestamp}, after validBefore` };
    }
    // The state after the block first: what made ours revert (a blacklist, a pause, a transfer out)
    // may have landed in the same block, before it; then the state before the block.
    for (const blockNumber of [receipt.blockNumber, receipt.blockNumber - 1n]) {
      try {
        await ctx.publicClient.simulateContract({ ...call, account: ctx.senderFor(request.authorization.to), blockNumber });
      } catch (err) {
        if (isRevert(err)) return captureFailureFromRevert(err);
      }
    }
    // The hash is added by the machine when it records the failure; do not name it twice.
    return { code: 'capture_reverted' as const, message: 'the capture transaction reverted onchain' };
  }

  return { awaitCaptureInclusion, awaitCaptureConfirmation };
}
