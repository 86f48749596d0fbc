// The eth_getLogs filter object, whole: range as hex or tags, one address or many, topics with
// null wildcards and OR-arrays per position, or a blockHash that replaces the range.
import type { Address, Hex } from 'viem';
import { AuthcapError } from '../../domain/errors.js';
import { parseBlockSelector, parseRpcAddress, parseTopic, type BlockSelector } from './selectors.js';

export type TopicFilter = Hex | Hex[] | null;

export interface LogFilter {
  fromBlock?: BlockSelector;
  toBlock?: BlockSelector;
  address?: Address | Address[];
  topics?: TopicFilter[];
  blockHash?: Hex;
}

export function parseLogFilter(input: unknown): LogFilter {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new AuthcapError('validation_error', 'the filter must be an object');
  }
  const f = input as Record<string, unknown>;
  const filter: LogFilter = {};
  if (f.blockHash !== undefined) filter.blockHash = parseTopic(f.blockHash, 'blockHash');
  // With blockHash the range is ignored (spec rule 3), so a range beside it is not checked either.
  if (!filter.blockHash) {
    if (f.fromBlock !== undefined) filter.fromBlock = parseBlockSelector(f.fromBlock, 'fromBlock');
    if (f.toBlock !== undefined) filter.toBlock = parseBlockSelector(f.toBlock, 'toBlock');
  }
  if (f.address !== undefined) {
    filter.address = Array.isArray(f.address) ? f.address.map((a, i) => parseRpcAddress(a, `address[${i}]`)) : parseRpcAddress(f.address, 'address');
  }
  if (f.topics !== undefined) {
    if (!Array.isArray(f.topics) || f.topics.length > 4) {
      throw new AuthcapError('validation_error', 'topics must be an array of at most 4 positions');
    }
    filter.topics = f.topics.map((position, i) => {
      if (position === null) return null;
      if (Array.isArray(position)) return position.map((t, j) => parseTopic(t, `topics[${i}][${j}]`));
      return parseTopic(position, `topics[${i}]`);
    });
  }
  const criteria = [filter.blockHash, filter.fromBlock, filter.toBlock, filter.address, filter.topics].filter((c) => c !== undefined);
  if (criteria.length === 0) throw new AuthcapError('validation_error', 'give at least one filter criterion');
  return filter;
}

/** The filter in JSON-RPC form (what goes over the wire). */
export function toRpcFilter(filter: LogFilter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (filter.blockHash) out.blockHash = filter.blockHash;
  else {
    if (filter.fromBlock) out.fromBlock = filter.fromBlock;
    if (filter.toBlock) out.toBlock = filter.toBlock;
  }
  if (filter.address) out.address = filter.address;
  if (filter.topics) out.topics = filter.topics;
  return out;
}
