import { encodeEventTopics, type Address, type Hex } from 'viem';
import type { OnchainNonceFacts } from '../domain/facts.js';
import type { NonceStateRequest } from '../domain/activityContract.js';
import { pairKey } from '../domain/eip3009.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';
import type { DecodedLog } from './rpc/logReader.js';

export const authorizationUsedTopic = encodeEventTopics({ abi: tokenAbi, eventName: 'AuthorizationUsed' })[0];
export const authorizationCanceledTopic = encodeEventTopics({ abi: tokenAbi, eventName: 'AuthorizationCanceled' })[0];

function addressTopic(address: Address): Hex {
  return `0x${address.slice(2).toLowerCase().padStart(64, '0')}`;
}

/**
 * Topics for many (authorizer, nonce) pairs in ONE eth_getLogs call: either event, OR-arrays of
 * payers and of nonces. The cross product can match pairs nobody asked about; callers filter.
 */
export function consumptionTopics(pairs: { authorizer: Address; nonce: Hex }[]): [Hex[], Hex[], Hex[]] {
  const payers = [...new Set(pairs.map((p) => addressTopic(p.authorizer)))];
  const nonces = [...new Set(pairs.map((p) => p.nonce.toLowerCase() as Hex))];
  return [[authorizationUsedTopic, authorizationCanceledTopic], payers, nonces];
}

export function nonceTopics(authorizer: Address, nonce: Hex): [Hex[], Hex[], Hex[]] {
  return consumptionTopics([{ authorizer, nonce }]);
}

/** The log's (authorizer, nonce) as a key, for matching against what was asked. */
export function logPairKey(log: DecodedLog): string {
  return pairKey(`0x${log.topics[1]!.slice(26)}`, log.topics[2]!);
}

export function consumptionFromLog(log: DecodedLog): OnchainNonceFacts {
  if (!log.transactionHash || log.blockNumber === null || !log.blockHash) {
    throw new Error('nonce is consumed but its log is not in a block yet');
  }
  return {
    status: log.topics[0] === authorizationCanceledTopic ? 'canceled' : 'used',
    transactionHash: log.transactionHash,
    blockNumber: log.blockNumber.toString(),
    blockHash: log.blockHash,
  };
}

export function createNonceStateActivity(ctx: ChainContext) {
  /**
   * authorizationState is true for used and for canceled alike; only the log says which. Reads the
   * cheap view first and scans logs only when the nonce is consumed.
   */
  return async function readNonceState(request: NonceStateRequest): Promise<OnchainNonceFacts> {
    const consumed = await ctx.publicClient.readContract({
      address: ctx.tokenAddress,
      abi: tokenAbi,
      functionName: 'authorizationState',
      args: [request.authorizer, request.nonce],
    });
    if (!consumed) return { status: 'unused' };
    const logs = await ctx.logs.getLogs({
      address: ctx.tokenAddress,
      topics: nonceTopics(request.authorizer, request.nonce),
      // From the authorization's creation, not from genesis: on a 0.2 s chain that is millions of blocks.
      fromBlock: request.fromBlock ? BigInt(request.fromBlock) : 'earliest',
      toBlock: 'latest',
    });
    const log = logs.find((l) => !l.removed && logPairKey(l) === pairKey(request.authorizer, request.nonce));
    if (!log) throw new Error('nonce is consumed but its log is not in a block yet');
    return consumptionFromLog(log);
  };
}
