// Every log read goes through here. Ranges are split into spans under 2,000 blocks (the spec's
// recommended limit); a span the provider rejects or times out on is halved and retried; results are
// decoded into the token's events, with blockTimestamp taken from the log or fetched from its block.
import { decodeEventLog, type Address, type Chain, type Hex, type PublicClient, type Transport } from 'viem';
import { authorizationEvents } from '../../domain/tokenAbi.js';
import { parseLogFilter, toRpcFilter, type LogFilter } from './filter.js';
import { classifyRpcError } from './rpcErrors.js';
import { isNumberSelector, type BlockSelector } from './selectors.js';

/** toBlock − fromBlock stays below 2,000: at most 1,999 blocks per call. */
export const MAX_SPAN_BLOCKS = 1_999n;

export type TokenEventName = 'Transfer' | 'AuthorizationUsed' | 'AuthorizationCanceled';

export interface DecodedLog {
  eventName: TokenEventName | null;
  args: Record<string, unknown> | null;
  address: Address;
  topics: Hex[];
  data: Hex;
  blockNumber: bigint | null;
  blockHash: Hex | null;
  blockTimestamp: bigint | null;
  transactionHash: Hex | null;
  transactionIndex: number | null;
  logIndex: number | null;
  removed: boolean;
}

interface RpcLog {
  address: Address;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex | null;
  blockHash: Hex | null;
  blockTimestamp?: Hex | null;
  transactionHash: Hex | null;
  transactionIndex: Hex | null;
  logIndex: Hex | null;
  removed?: boolean;
}

export interface LogReaderOptions {
  maxSpanBlocks?: bigint;
  /** Spans fetched at once over a wide range. */
  concurrency?: number;
}

export class LogReader {
  private readonly maxSpan: bigint;
  private readonly concurrency: number;
  private readonly timestamps = new Map<Hex, Promise<bigint>>();

  constructor(
    private readonly client: PublicClient<Transport, Chain>,
    options: LogReaderOptions = {},
  ) {
    this.maxSpan = options.maxSpanBlocks ?? MAX_SPAN_BLOCKS;
    this.concurrency = options.concurrency ?? 4;
  }

  async getLogs(input: LogFilter | unknown): Promise<DecodedLog[]> {
    const filter = parseLogFilter(input);
    if (filter.blockHash) return this.decodeAll(await this.call(filter));
    const from = filter.fromBlock ?? 'latest';
    const to = filter.toBlock ?? 'latest';
    const raw: RpcLog[] = [];
    // The preconfirmed view has no block number yet: it is read as its own call, never split.
    if (from !== 'pending') {
      const lo = await this.resolve(from);
      const hi = to === 'pending' ? await this.resolve('latest') : await this.resolve(to);
      if (lo <= hi) raw.push(...(await this.fetchRange(filter, lo, hi)));
    }
    if (to === 'pending') raw.push(...(await this.call({ ...filter, fromBlock: 'pending', toBlock: 'pending' })));
    return this.decodeAll(dedupe(raw));
  }

  /** The spans a range is read in, before any halving. */
  spans(lo: bigint, hi: bigint): [bigint, bigint][] {
    const spans: [bigint, bigint][] = [];
    for (let start = lo; start <= hi; start += this.maxSpan) {
      const end = start + this.maxSpan - 1n;
      spans.push([start, end > hi ? hi : end]);
    }
    return spans;
  }

  private async fetchRange(filter: LogFilter, lo: bigint, hi: bigint): Promise<RpcLog[]> {
    const spans = this.spans(lo, hi);
    const results: RpcLog[][] = new Array(spans.length);
    let next = 0;
    const worker = async () => {
      while (next < spans.length) {
        const i = next++;
        const [a, b] = spans[i]!;
        results[i] = await this.fetchSpan(filter, a, b);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, spans.length) }, worker));
    return results.flat();
  }

  private async fetchSpan(filter: LogFilter, lo: bigint, hi: bigint): Promise<RpcLog[]> {
    try {
      return await this.call({ ...filter, fromBlock: hex(lo), toBlock: hex(hi) });
    } catch (err) {
      if (lo === hi || classifyRpcError(err, { forLogs: true }) !== 'range_too_large') throw err;
      const mid = lo + (hi - lo) / 2n;
      return [...(await this.fetchSpan(filter, lo, mid)), ...(await this.fetchSpan(filter, mid + 1n, hi))];
    }
  }

  private async resolve(selector: BlockSelector): Promise<bigint> {
    if (isNumberSelector(selector)) return BigInt(selector);
    if (selector === 'earliest') return 0n;
    const block = await this.client.getBlock({ blockTag: selector });
    return block.number ?? (await this.client.getBlockNumber({ cacheTime: 0 }));
  }

  private call(filter: LogFilter): Promise<RpcLog[]> {
    return this.client.request({ method: 'eth_getLogs', params: [toRpcFilter(filter) as never] }) as unknown as Promise<RpcLog[]>;
  }

  /** Decodes logs that arrived some other way (a subscription message). */
  decodeRaw(logs: Record<string, unknown>[]): Promise<DecodedLog[]> {
    return this.decodeAll(logs as unknown as RpcLog[]);
  }

  private async decodeAll(logs: RpcLog[]): Promise<DecodedLog[]> {
    return Promise.all(logs.map((log) => this.decode(log)));
  }

  private async decode(log: RpcLog): Promise<DecodedLog> {
    let eventName: TokenEventName | null = null;
    let args: Record<string, unknown> | null = null;
    try {
      const decoded = decodeEventLog({ abi: authorizationEvents, topics: log.topics as [Hex, ...Hex[]], data: log.data });
      eventName = decoded.eventName as TokenEventName;
      args = decoded.args as Record<string, unknown>;
    } catch {
      // Not one of the token events authcap knows: kept raw.
    }
    return {
      eventName,
      args,
      address: log.address,
      topics: log.topics,
      data: log.data,
      blockNumber: log.blockNumber === null ? null : BigInt(log.blockNumber),
      blockHash: log.blockHash,
      blockTimestamp: await this.timestampOf(log),
      transactionHash: log.transactionHash,
      transactionIndex: log.transactionIndex === null ? null : Number(log.transactionIndex),
      logIndex: log.logIndex === null ? null : Number(log.logIndex),
      removed: log.removed === true,
    };
  }

  /** blockTimestamp is a chain extension: used when present, else read once per block. */
  private async timestampOf(log: RpcLog): Promise<bigint | null> {
    if (log.blockTimestamp) return BigInt(log.blockTimestamp);
    if (!log.blockHash) return null;
    let ts = this.timestamps.get(log.blockHash);
    if (!ts) {
      ts = this.client.getBlock({ blockHash: log.blockHash }).then((b) => b.timestamp);
      ts.catch(() => this.timestamps.delete(log.blockHash!));
      this.timestamps.set(log.blockHash, ts);
      if (this.timestamps.size > 1_000) this.timestamps.delete(this.timestamps.keys().next().value!);
    }
    return ts;
  }
}

function hex(n: bigint): Hex {
  return `0x${n.toString(16)}`;
}

/** A log reported twice (a span boundary, the pending view overlapping latest) counts once. */
function dedupe(logs: RpcLog[]): RpcLog[] {
  const seen = new Set<string>();
  return logs.filter((log) => {
    const key = `${log.transactionHash}:${log.logIndex}:${log.blockHash ?? 'pending'}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
