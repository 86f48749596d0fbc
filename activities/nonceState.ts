import { encodeEventTopics, type Address, type Hex, type Log } from 'viem';
import type { OnchainNonceFacts } from '../domain/facts.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';

export const authorizationUsedTopic = encodeEventTopics({ abi: tokenAbi, eventName: 'AuthorizationUsed' })[0];
export const authorizationCanceledTopic = encodeEventTopics({ abi: tokenAbi, eventName: 'AuthorizationCanceled' })[0];

/** The topics filter for one (authorizer, nonce): either event, that payer, that nonce. */
export function nonceTopics(authorizer: Address, nonce: Hex): [Hex[], Hex, Hex] {
  const [, payerTopic] = encodeEventTopics({ abi: tokenAbi, eventName: 'AuthorizationUsed', args: { authorizer } });
  return [[authorizationUsedTopic, authorizationCanceledTopic], payerTopic as Hex, nonce];
}

export function createNonceStateActivity(ctx: ChainContext) {
  /**
   * authorizationState is true for used and for canceled alike; only the log says which. Reads the
   * cheap view first and scans logs only when the nonce is consumed.
   */
  return async function readNonceState(request: { authorizer: Address; nonce: Hex }): Promise<OnchainNonceFacts> {
    const consumed = await ctx.publicClient.readContract({
      address: ctx.tokenAddress, abi: tokenAbi, functionName: 'authorizationState', args: [request.authorizer, request.nonce],
    });
    if (!consumed) return { status: 'unused' };
    const logs = await ctx.publicClient.request({
      method: 'eth_getLogs',
      params: [{ address: ctx.tokenAddress, topics: nonceTopics(request.authorizer, request.nonce), fromBlock: 'earliest', toBlock: 'latest' }],
    });
    const log = (logs as Log[]).find((l) => !l.removed);
    if (!log || !log.transactionHash || log.blockNumber === null || !log.blockHash) {
      // Consumed in the pending view but not yet in a block: not a fact to act on yet.
      throw new Error('nonce is consumed but its log is not in a block yet');
    }
    return {
      status: log.topics[0] === authorizationCanceledTopic ? 'canceled' : 'used',
      transactionHash: log.transactionHash,
      blockNumber: BigInt(log.blockNumber).toString(),
      blockHash: log.blockHash,
    };
  };
}
