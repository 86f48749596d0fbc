// What the `pending` (preconfirmed) view says of one (authorizer, nonce): the AuthorizationUsed log
// of whichever transaction carried it (ours, a fee-bumped replacement, someone else's), or a
// cancellation that means ours can never land. Shared by every follower of a capture or refund.
import type { Hex } from 'viem';
import type { OnchainConsumption } from '../domain/facts.js';
import type { ChainContext } from './chainContext.js';
import { authorizationCanceledTopic, authorizationUsedTopic, consumptionFromLog, logPairKey, nonceTopics } from './nonceState.js';
import { pairKey } from '../domain/eip3009.js';

export type PendingNonceLog =
  | { status: 'included'; transactionHash: Hex; blockNumber: string; blockHash: Hex }
  | { status: 'consumed'; onchain: OnchainConsumption };

/** The nonce's log at or after `fromBlock`, up to the pending block; undefined while there is none. */
export async function pendingNonceLog(
  ctx: Pick<ChainContext, 'logs' | 'tokenAddress'>,
  from: Hex,
  nonce: Hex,
  fromBlock: bigint,
): Promise<PendingNonceLog | undefined> {
  const logs = await ctx.logs.getLogs({
    address: ctx.tokenAddress,
    topics: nonceTopics(from, nonce),
    fromBlock: fromBlock > 0n ? fromBlock : 0n,
    toBlock: 'pending',
  });
  const mine = logs.filter((l) => !l.removed && logPairKey(l) === pairKey(from, nonce));
  const used = mine.find((l) => l.topics[0] === authorizationUsedTopic);
  if (used?.transactionHash && used.blockNumber !== null && used.blockHash) {
    return { status: 'included', transactionHash: used.transactionHash, blockNumber: used.blockNumber.toString(), blockHash: used.blockHash };
  }
  const canceled = mine.find((l) => l.topics[0] === authorizationCanceledTopic && l.blockNumber !== null);
  if (canceled) return { status: 'consumed', onchain: consumptionFromLog(canceled) as OnchainConsumption };
  return undefined;
}
