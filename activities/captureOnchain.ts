// A capture (or a refund) in one activity: it hands the typed call to the merchant's relayer, then
// follows the authorization's nonce on the chain to the confirmation depth. It needs no answer from
// the relayer: the token's AuthorizationUsed(payer, nonce) log says the capture landed, whichever
// transaction carried it (ours, a fee-bumped replacement). The relayer signals the authorization only
// when it refuses the call or its transaction reverts or is abandoned. It heartbeats what it has seen
// (the transaction, its preconfirmation) so a read of the authorization shows it before the end, and
// a retried attempt goes on from there.
import type { Hex } from 'viem';
import type { CaptureOnchainProgress, CaptureOnchainRequest, CaptureOnchainResult, FollowedOutcome } from '../domain/activityContract.js';
import type { OnchainConsumption } from '../domain/facts.js';
import type { RelayRequest } from '../domain/relay.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';
import { heartbeat, lastHeartbeat, untilNextBlock, waitForDepth } from './heartbeat.js';
import { pendingNonceLog } from './pendingNonceLog.js';
import { authorizationUsedTopic, nonceTopics } from './nonceState.js';

/** A capture may be mined a few blocks before this activity first looks. */
const LOOK_BACK_BLOCKS = 8n;

export function createCaptureOnchainActivity(ctx: ChainContext, requestRelay: (request: RelayRequest) => Promise<void>) {
  return async function captureOnchain(request: CaptureOnchainRequest): Promise<CaptureOnchainResult> {
    const { from, nonce, validBefore } = request.call.authorization;
    const unfollow = ctx.followed.follow(from, nonce);
    let settled = false;
    try {
      const outcome = await follow(request, from, nonce, BigInt(validBefore));
      settled = true;
      // Named, so the workflow can check the answer is about its own nonce (workflows/followOnchain.ts).
      return { ...outcome, authorizer: from, nonce };
    } finally {
      unfollow(settled);
    }
  };

  async function follow(request: CaptureOnchainRequest, from: Hex, nonce: Hex, validBefore: bigint): Promise<FollowedOutcome> {
    let progress = lastHeartbeat<CaptureOnchainProgress>();
    if (!progress) {
      // Asking twice is harmless (the relayer answers one request id once): a retried attempt that
      // never heartbeated asks again.
      const submittedAt = new Date().toISOString();
      // Read before the request leaves: the transaction cannot be in a block below this one. The
      // workflow's own bound (read before it decided) also covers an earlier attempt of this activity.
      const lowest = request.fromBlock !== undefined ? BigInt(request.fromBlock) : (await head(ctx)) - LOOK_BACK_BLOCKS;
      // A capture is sent by its payee (receiveWithAuthorization insists); a refund by the key that signed it.
      const sender = request.call.kind === 'refund' ? request.call.authorization.from : request.call.authorization.to;
      await requestRelay({ requestId: request.requestId, replyTo: request.replyTo, sender, call: request.call, replyOn: 'failure' });
      progress = { submittedAt, fromBlock: (lowest > 0n ? lowest : 0n).toString() };
      heartbeat(progress);
    }
    for (;;) {
      // Inclusion: the log in the `pending` (preconfirmed) view, or what else consumed the nonce.
      const seen = await untilSeen(ctx, from, nonce, validBefore, BigInt(progress.fromBlock));
      if (seen.status !== 'included') return seen;
      progress = {
        ...progress,
        transactionHash: seen.transactionHash,
        blockNumber: seen.blockNumber,
        blockHash: seen.blockHash,
        preconfirmedAt: progress.preconfirmedAt ?? new Date().toISOString(),
      };
      heartbeat(progress);
      // Depth, then the log read back at its block: a reorg shows as a moved or missing log.
      await waitForDepth(ctx, BigInt(seen.blockNumber));
      const logs = await ctx.logs.getLogs({
        address: ctx.tokenAddress,
        topics: nonceTopics(from, nonce),
        fromBlock: BigInt(seen.blockNumber),
        toBlock: BigInt(seen.blockNumber),
      });
      const log = logs.find((l) => !l.removed && l.topics[0] === authorizationUsedTopic && l.blockHash === seen.blockHash);
      if (log?.transactionHash) {
        return {
          status: 'confirmed',
          // A ReceiveWithAuthorization only its payee (our key) can submit; anyone may send a TransferWithAuthorization.
          by:
            request.call.kind === 'refund' || request.call.primaryType === 'ReceiveWithAuthorization' || (await sentByMerchant(ctx, log.transactionHash))
              ? 'authcap'
              : 'onchain',
          transactionHash: log.transactionHash,
          blockNumber: seen.blockNumber,
          blockHash: seen.blockHash,
          submittedAt: progress.submittedAt,
          preconfirmedAt: progress.preconfirmedAt!,
          confirmedAt: new Date().toISOString(),
        };
      }
      // Reorganized away: wait for it (or a replacement) to land again.
      progress = { submittedAt: progress.submittedAt, fromBlock: progress.fromBlock, reorgs: (progress.reorgs ?? 0) + 1 };
      heartbeat(progress);
    }
  }
}

async function sentByMerchant(ctx: ChainContext, hash: Hex): Promise<boolean> {
  const tx = await ctx.publicClient.getTransaction({ hash });
  return ctx.isMerchant(tx.from);
}

async function head(ctx: ChainContext): Promise<bigint> {
  return ctx.heads.head ?? (await ctx.publicClient.getBlockNumber({ cacheTime: 0 }));
}

type Seen =
  | { status: 'included'; transactionHash: Hex; blockNumber: string; blockHash: Hex }
  | { status: 'consumed'; onchain: OnchainConsumption }
  | { status: 'expired' };

/** Until the nonce's log shows in the pending view (or it was canceled, or the window closed unused). */
async function untilSeen(ctx: ChainContext, from: Hex, nonce: Hex, validBefore: bigint, fromBlock: bigint): Promise<Seen> {
  for (;;) {
    const seen = ctx.heads.head;
    const found = await pendingNonceLog(ctx, from, nonce, fromBlock);
    if (found) return found;
    // Past validBefore by block time nothing can land any more: the window decides.
    if (Date.now() / 1000 > Number(validBefore)) {
      const block = await ctx.publicClient.getBlock({ blockTag: 'latest' });
      if (block.timestamp >= validBefore) {
        const consumed = await ctx.publicClient.readContract({
          address: ctx.tokenAddress,
          abi: tokenAbi,
          functionName: 'authorizationState',
          args: [from, nonce],
        });
        if (!consumed) return { status: 'expired' };
      }
    }
    await untilNextBlock(ctx, seen);
  }
}
