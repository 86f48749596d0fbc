// Submitting a capture and following it into a block and to the confirmation depth.
import { encodeFunctionData, type Address, type Hex, type TransactionReceipt } from 'viem';
import type { CaptureConfirmation, CaptureInclusion, CaptureRequest, PrepareResult } from '../domain/activityContract.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';
import { CAPTURE_GAS_LIMIT } from './precheck.js';
import { authorizationUsedTopic, createNonceStateActivity, logPairKey, nonceTopics, pairKey } from './nonceState.js';
import { captureFailureFromRevert, isRevert } from './revert.js';
import { heartbeat, sleep, waitForDepth, waitForReceipt } from './heartbeat.js';
import { captureCall } from './tokenCalls.js';

export { captureCall };

export function createCaptureActivities(ctx: ChainContext) {
  const readNonceState = createNonceStateActivity(ctx);

  async function prepareCapture(request: CaptureRequest): Promise<PrepareResult> {
    const onchain = await readNonceState({ authorizer: request.authorization.from, nonce: request.authorization.nonce });
    if (onchain.status !== 'unused') return { status: 'consumed', onchain };
    const call = captureCall(request, ctx.tokenAddress);
    try {
      // Simulating against `pending` catches every revert the token would raise, before paying gas.
      await ctx.publicClient.simulateContract({ ...call, account: ctx.merchant, blockTag: 'pending' });
    } catch (err) {
      if (isRevert(err)) return { status: 'failed', failure: captureFailureFromRevert(err) };
      throw err;
    }
    const data = encodeFunctionData({ abi: call.abi, functionName: call.functionName, args: call.args });
    return { status: 'ready', transaction: { to: ctx.tokenAddress, data, gas: CAPTURE_GAS_LIMIT.toString() } };
  }

  /**
   * Waits for the capture to show: its AuthorizationUsed log in the `pending` (preconfirmed) view,
   * about 200 ms after submission on a Flashblocks chain, or a receipt saying it reverted.
   */
  async function awaitCaptureInclusion(request: CaptureRequest & { transactionHash: Hex }): Promise<CaptureInclusion> {
    const { from, nonce } = request.authorization;
    const start = await ctx.publicClient.getBlockNumber({ cacheTime: 0 });
    // A few blocks back covers a capture mined between our submission and this first look.
    const fromBlock = start > 8n ? start - 8n : 0n;
    for (;;) {
      // The receipt first: once it exists its logs are the definitive answer. Reading logs first
      // would race a block sealed between the two calls.
      const receipt = await ctx.publicClient.getTransactionReceipt({ hash: request.transactionHash }).catch(() => undefined);
      if (receipt?.status === 'reverted') return { status: 'failed', failure: await explainRevert(request, receipt) };
      if (receipt) {
        const used = receipt.logs.find(
          (log) => log.address.toLowerCase() === ctx.tokenAddress.toLowerCase() && log.topics[0] === authorizationUsedTopic &&
            log.topics[2]?.toLowerCase() === nonce.toLowerCase(),
        );
        if (!used) return { status: 'failed', failure: { code: 'capture_reverted', message: 'the capture transaction emitted no AuthorizationUsed log' } };
        return { status: 'included', transactionHash: receipt.transactionHash, blockNumber: receipt.blockNumber.toString(), blockHash: receipt.blockHash };
      }
      // Not mined (or replaced under a new hash): the preconfirmed view shows the log of whichever lands.
      const logs = await ctx.logs.getLogs({ address: ctx.tokenAddress, topics: nonceTopics(from, nonce), fromBlock, toBlock: 'pending' });
      const used = logs.find((l) => !l.removed && l.topics[0] === authorizationUsedTopic && logPairKey(l) === pairKey(from, nonce));
      if (used?.transactionHash && used.blockNumber !== null && used.blockHash) {
        return { status: 'included', transactionHash: used.transactionHash, blockNumber: used.blockNumber.toString(), blockHash: used.blockHash };
      }
      heartbeat();
      await sleep(ctx.pollingIntervalMs);
    }
  }

  /** Waits for the confirmation depth, then reads the log back: a reorg shows as a moved or missing log. */
  async function awaitCaptureConfirmation(request: CaptureRequest & { transactionHash: Hex; blockHash: Hex }): Promise<CaptureConfirmation> {
    const { from, nonce } = request.authorization;
    const receipt = await waitForReceipt(ctx, request.transactionHash);
    await waitForDepth(ctx, receipt.blockNumber);
    const logs = await ctx.logs.getLogs({ address: ctx.tokenAddress, topics: nonceTopics(from, nonce), fromBlock: receipt.blockNumber, toBlock: receipt.blockNumber });
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
    try {
      await ctx.publicClient.simulateContract({ ...call, account: ctx.merchant, blockNumber: receipt.blockNumber - 1n });
    } catch (err) {
      return captureFailureFromRevert(err);
    }
    return { code: 'capture_reverted' as const, message: `capture transaction ${receipt.transactionHash} reverted` };
  }

  return { prepareCapture, awaitCaptureInclusion, awaitCaptureConfirmation };
}
