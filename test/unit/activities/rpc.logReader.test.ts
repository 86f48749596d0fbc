// LogReader against a scripted fake node: span arithmetic, halving, the pending view, dedupe,
// decoding and the timestamp cache, each observable through the exact calls it makes.
import { describe, expect, it } from 'vitest';
import {
  InvalidParamsRpcError,
  LimitExceededRpcError,
  RpcRequestError,
  TimeoutError,
  encodeAbiParameters,
  encodeEventTopics,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
} from 'viem';
import { AuthcapError } from '../../../domain/errors.js';
import { tokenAbi } from '../../../domain/tokenAbi.js';
import { LogReader, MAX_SPAN_BLOCKS } from '../../../activities/rpc/logReader.js';

const TOKEN = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
const FROM = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const TO = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const hex = (n: bigint | number): Hex => `0x${n.toString(16)}`;
const hashOf = (block: number): Hex => `0x${block.toString(16).padStart(64, '0')}`;
const rpc = (code: number, message: string) => new RpcRequestError({ url: 'http://node', body: {}, error: { code, message } });

type Filter = { fromBlock?: string; toBlock?: string; blockHash?: string };

/** One Transfer log per block, value = block number; blockTimestamp = 1000 + block unless dropped. */
function logAt(block: number, extra: Record<string, unknown> = {}) {
  return {
    address: TOKEN,
    topics: encodeEventTopics({ abi: tokenAbi, eventName: 'Transfer', args: { from: FROM, to: TO } }),
    data: encodeAbiParameters([{ type: 'uint256' }], [BigInt(block)]),
    blockNumber: hex(block),
    blockHash: hashOf(block),
    blockTimestamp: hex(1000 + block),
    transactionHash: hashOf(10_000 + block),
    transactionIndex: '0x0',
    logIndex: '0x0',
    removed: false,
    ...extra,
  };
}

function fakeNode(options: { latest?: number; answer?: (f: Filter) => unknown; delay?: () => number; getBlockFails?: number } = {}) {
  const latest = options.latest ?? 100;
  const calls: Filter[] = [];
  const getBlock: Record<string, unknown>[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let failures = options.getBlockFails ?? 0;
  const inRange = (f: Filter) => {
    const [a, b] = [Number(f.fromBlock), Number(f.toBlock)];
    return Array.from({ length: b - a + 1 }, (_, i) => logAt(a + i));
  };
  const client = {
    async request({ method, params }: { method: string; params: [Filter] }) {
      expect(method).toBe('eth_getLogs');
      calls.push(params[0]);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        if (options.delay) await new Promise((r) => setTimeout(r, options.delay!()));
        const out = (options.answer ?? inRange)(params[0]);
        if (out instanceof Error) throw out;
        return out;
      } finally {
        inFlight--;
      }
    },
    async getBlock(args: { blockTag?: string; blockHash?: Hex }) {
      getBlock.push(args);
      if (args.blockHash) {
        if (failures-- > 0) throw new Error('fetch failed');
        return { timestamp: 5000n + BigInt(args.blockHash) };
      }
      return { number: BigInt(args.blockTag === 'safe' ? latest - 32 : latest) };
    },
    async getBlockNumber() {
      return BigInt(latest);
    },
  } as unknown as PublicClient<Transport, Chain>;
  return { client, calls, getBlock, ranges: () => calls.map((f) => [Number(f.fromBlock), Number(f.toBlock)]), maxInFlight: () => maxInFlight };
}

describe('spans', () => {
  const reader = (max?: bigint) => new LogReader(fakeNode().client, max === undefined ? {} : { maxSpanBlocks: max });

  it('MAX_SPAN_BLOCKS keeps toBlock − fromBlock under 2,000', () => {
    expect(MAX_SPAN_BLOCKS).toBe(1999n);
    const spans = reader().spans(0n, 5000n);
    expect(spans).toEqual([
      [0n, 1998n],
      [1999n, 3997n],
      [3998n, 5000n],
    ]);
    expect(spans.every(([a, b]) => b - a < 2000n)).toBe(true);
  });

  it('covers the range exactly, with a short last span', () => {
    expect(reader(3n).spans(0n, 7n)).toEqual([
      [0n, 2n],
      [3n, 5n],
      [6n, 7n],
    ]);
    expect(reader(3n).spans(5n, 5n)).toEqual([[5n, 5n]]);
    expect(reader(1n).spans(2n, 4n)).toEqual([
      [2n, 2n],
      [3n, 3n],
      [4n, 4n],
    ]);
    expect(reader(3n).spans(6n, 5n)).toEqual([]);
  });
});

describe('getLogs', () => {
  it('reads a range span by span, in order, at most `concurrency` spans at once', async () => {
    const node = fakeNode({ delay: () => Math.random() * 10 });
    const got = await new LogReader(node.client, { maxSpanBlocks: 2n, concurrency: 3 }).getLogs({ fromBlock: '0x0', toBlock: '0x9' });
    expect(got.map((l) => l.blockNumber)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i)));
    expect([...node.ranges()].sort((a, b) => a[0]! - b[0]!)).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
      [6, 7],
      [8, 9],
    ]);
    expect(node.maxInFlight()).toBe(3);
  });

  it('resolves tags: no range means latest..latest; earliest is 0; safe asks the node', async () => {
    const node = fakeNode({ latest: 50 });
    const reader = new LogReader(node.client);
    await reader.getLogs({ address: TOKEN });
    await reader.getLogs({ fromBlock: 'earliest', toBlock: 'safe' });
    expect(node.ranges()).toEqual([
      [50, 50],
      [0, 18],
    ]);
  });

  it('an inverted range makes no call', async () => {
    const node = fakeNode();
    expect(await new LogReader(node.client).getLogs({ fromBlock: '0x9', toBlock: '0x2' })).toEqual([]);
    expect(node.calls).toEqual([]);
  });

  it.each([
    ['-32005', () => new LimitExceededRpcError(rpc(-32005, 'query exceeds max block range 10'))],
    ['a timeout', () => new TimeoutError({ url: 'http://node', body: {} })],
    ['"block range is too large"', () => rpc(-32000, 'block range is too large')],
  ])('halves a span refused with %s until each half is accepted', async (_name, refusal) => {
    const node = fakeNode({ answer: (f) => (Number(f.toBlock) - Number(f.fromBlock) > 10 ? refusal() : [logAt(Number(f.fromBlock))]) });
    const got = await new LogReader(node.client).getLogs({ fromBlock: '0x0', toBlock: hex(40) });
    expect(node.ranges()).toEqual([
      [0, 40],
      [0, 20],
      [0, 10],
      [11, 20],
      [21, 40],
      [21, 30],
      [31, 40],
    ]);
    expect(got.map((l) => l.blockNumber)).toEqual([0n, 11n, 21n, 31n]);
  });

  it('does not halve what halving cannot fix: invalid params fail at once', async () => {
    const err = new InvalidParamsRpcError(rpc(-32602, 'invalid argument 0'));
    const node = fakeNode({ answer: () => err });
    await expect(new LogReader(node.client).getLogs({ fromBlock: '0x0', toBlock: '0x40' })).rejects.toBe(err);
    expect(node.calls).toHaveLength(1);
  });

  it('gives up with the provider error once a single block is still refused', async () => {
    const err = new LimitExceededRpcError(rpc(-32005, 'response size exceeded'));
    const node = fakeNode({ answer: () => err });
    await expect(new LogReader(node.client).getLogs({ fromBlock: '0x0', toBlock: '0x3' })).rejects.toBe(err);
    expect(node.ranges()).toEqual([
      [0, 3],
      [0, 1],
      [0, 0],
    ]);
  });

  it('reads pending as its own call after the range, and counts a log seen in both once', async () => {
    const node = fakeNode({
      latest: 7,
      answer: (f) => (f.fromBlock === 'pending' ? [logAt(7), logAt(8, { blockHash: null, blockNumber: null, blockTimestamp: null })] : [logAt(7)]),
    });
    const got = await new LogReader(node.client).getLogs({ fromBlock: '0x7', toBlock: 'pending' });
    expect(node.calls.map((f) => [f.fromBlock, f.toBlock])).toEqual([
      ['0x7', '0x7'],
      ['pending', 'pending'],
    ]);
    expect(got.map((l) => [l.blockNumber, l.blockHash, l.blockTimestamp])).toEqual([
      [7n, hashOf(7), 1007n],
      [null, null, null],
    ]);
  });

  it('pending..pending is one call; blockHash is one call with nothing else', async () => {
    const node = fakeNode({ answer: () => [] });
    const reader = new LogReader(node.client);
    await reader.getLogs({ fromBlock: 'pending', toBlock: 'pending' });
    await reader.getLogs({ blockHash: hashOf(3), fromBlock: '0x1', toBlock: '0x9' });
    expect(node.calls).toEqual([{ fromBlock: 'pending', toBlock: 'pending' }, { blockHash: hashOf(3) }]);
  });

  it('decodes token events, keeps others raw, and converts the block facts', async () => {
    const unknown = { ...logAt(4), topics: [hashOf(999)], logIndex: '0x1', removed: true };
    const node = fakeNode({ answer: () => [logAt(4), unknown] });
    const [transfer, other] = await new LogReader(node.client).getLogs({ fromBlock: '0x4', toBlock: '0x4' });
    expect(transfer).toMatchObject({
      eventName: 'Transfer',
      args: { from: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', value: 4n },
      address: TOKEN,
      blockNumber: 4n,
      blockHash: hashOf(4),
      blockTimestamp: 1004n,
      transactionIndex: 0,
      logIndex: 0,
      removed: false,
    });
    expect(other).toMatchObject({ eventName: null, args: null, topics: [hashOf(999)], logIndex: 1, removed: true });
  });

  it('fetches a missing blockTimestamp once per block, and never when the log has one', async () => {
    const node = fakeNode({ answer: () => [1, 1, 2, 2, 2].map((b, i) => logAt(b, { blockTimestamp: undefined, logIndex: hex(i) })) });
    const reader = new LogReader(node.client);
    const got = await reader.getLogs({ fromBlock: '0x1', toBlock: '0x2' });
    expect(got.map((l) => l.blockTimestamp)).toEqual([5001n, 5001n, 5002n, 5002n, 5002n]);
    expect(node.getBlock.filter((a) => a.blockHash)).toEqual([{ blockHash: hashOf(1) }, { blockHash: hashOf(2) }]);
    await reader.getLogs({ fromBlock: '0x1', toBlock: '0x2' });
    expect(node.getBlock.filter((a) => a.blockHash)).toHaveLength(2);
  });

  it('does not cache a failed timestamp read', async () => {
    const node = fakeNode({ getBlockFails: 1, answer: () => [logAt(3, { blockTimestamp: undefined })] });
    const reader = new LogReader(node.client);
    await expect(reader.getLogs({ fromBlock: '0x3', toBlock: '0x3' })).rejects.toThrow('fetch failed');
    expect((await reader.getLogs({ fromBlock: '0x3', toBlock: '0x3' }))[0]!.blockTimestamp).toBe(5003n);
  });

  it.each([{}, { fromBlock: '0x01' }, { address: 'nope' }, { topics: [null, null, null, null, null] }, null])(
    'refuses %j with a validation_error before any call',
    async (filter) => {
      const node = fakeNode();
      const err = await new LogReader(node.client).getLogs(filter).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuthcapError);
      expect((err as AuthcapError).code).toBe('validation_error');
      expect(node.calls).toEqual([]);
      expect(node.getBlock).toEqual([]);
    },
  );
});
