// Submitting a capture and following it into a block and to the confirmation depth.
import { encodeFunctionData, type Address, type Hex, type TransactionReceipt } from 'viem';
import type { CaptureConfirmation, CaptureInclusion, CaptureRequest, SubmitCaptureResult } from '../domain/activityContract.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';
import { CAPTURE_GAS_LIMIT } from './precheck.js';
import { authorizationUsedTopic, nonceTopics, createNonceStateActivity } from './nonceState.js';
import { captureFailureFromRevert, isRevert } from './revert.js';
import type { SignedTransaction } from './relayer.js';
import { heartbeat, lastHeartbeat, waitForDepth, waitForReceipt } from './heartbeat.js';

/** receive… for ReceiveWithAuthorization (only we, the payee, can submit); transfer… for the other. */
export function captureCall(request: CaptureRequest, tokenAddress: Address) {
  const a = request.authorization;
  return {
    address: tokenAddress,
    abi: tokenAbi,
    functionName: request.primaryType === 'ReceiveWithAuthorization' ? 'receiveWithAuthorization' : 'transferWithAuthorization',
    args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, request.signature],
  } as const;
}

export function createCaptureActivities(ctx: ChainContext) {
  const readNonceState = createNonceStateActivity(ctx);

  async function submitCapture(request: CaptureRequest): Promise<SubmitCaptureResult> {
    // A retry of an attempt that already signed: rebroadcast that exact transaction, never a second one.
    const earlier = lastHeartbeat<SignedTransaction>();
    if (earlier?.raw) {
      await ctx.publicClient.sendRawTransaction({ serializedTransaction: earlier.raw }).catch(() => undefined);
      return { status: 'submitted', transactionHash: earlier.hash };
    }
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
    const signed = await ctx.relayer.send({ to: ctx.tokenAddress, data, gas: CAPTURE_GAS_LIMIT }, (tx) => heartbeat(tx));
    return { status: 'submitted', transactionHash: signed.hash };
  }

  async function awaitCaptureInclusion(request: CaptureRequest & { transactionHash: Hex }): Promise<CaptureInclusion> {
    const receipt = await waitForReceipt(ctx, request.transactionHash);
    if (receipt.status === 'reverted') {
      return { status: 'failed', failure: await explainRevert(request, receipt) };
    }
    const used = receipt.logs.find(
      (log) =>
        log.address.toLowerCase() === ctx.tokenAddress.toLowerCase() &&
        log.topics[0] === authorizationUsedTopic &&
        log.topics[2]?.toLowerCase() === request.authorization.nonce.toLowerCase(),
    );
    if (!used) {
      return { status: 'failed', failure: { code: 'capture_reverted', message: 'the capture transaction emitted no AuthorizationUsed log' } };
    }
    return { status: 'included', transactionHash: receipt.transactionHash, blockNumber: receipt.blockNumber.toString(), blockHash: receipt.blockHash };
  }

  async function awaitCaptureConfirmation(request: CaptureRequest & { transactionHash: Hex; blockHash: Hex }): Promise<CaptureConfirmation> {
    const receipt = await waitForReceipt(ctx, request.transactionHash);
    await waitForDepth(ctx, receipt.blockNumber);
    // Read the log back at the depth: a reorg in between shows up as a missing or moved log.
    const logs = await ctx.publicClient.request({
      method: 'eth_getLogs',
      params: [{
        address: ctx.tokenAddress,
        topics: nonceTopics(request.authorization.from, request.authorization.nonce),
        fromBlock: `0x${receipt.blockNumber.toString(16)}`,
        toBlock: `0x${receipt.blockNumber.toString(16)}`,
      }],
    });
    const log = logs.find((l) => !l.removed && l.transactionHash === request.transactionHash && l.topics[0] === authorizationUsedTopic);
    if (!log || !log.blockHash || log.blockNumber === null) return { status: 'reorged' };
    return { status: 'confirmed', transactionHash: request.transactionHash, blockNumber: BigInt(log.blockNumber).toString(), blockHash: log.blockHash };
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

  return { submitCapture, awaitCaptureInclusion, awaitCaptureConfirmation };
}
