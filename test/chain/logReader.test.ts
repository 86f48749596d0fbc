// LogReader against a real anvil (automine): every filter shape returns exactly the logs the chain
// holds (checked against receipts, read block by block), decoded, with block facts and timestamps;
// wide ranges are split and, behind a range-limited proxy, halved until the provider accepts them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeEventTopics, isAddressEqual, zeroAddress, type Address, type Log, type TransactionReceipt } from 'viem';
import { LogReader, type DecodedLog } from '../../activities/rpc/logReader.js';
import {
  authorizationCanceledTopic,
  authorizationUsedTopic,
  consumptionFromLog,
  consumptionTopics,
  logPairKey,
  nonceTopics,
} from '../../activities/nonceState.js';
import { pairKey } from '../../domain/eip3009.js';
import { PAYER_FUNDING } from '../../devstack/token.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { addressTopic, freshNonce, hex, logKey, startChain, type TestChain } from './support/chain.js';
import { rangeOf, startRpcProxy } from './support/rpcProxy.js';

const transferTopic = encodeEventTopics({ abi: tokenAbi, eventName: 'Transfer' })[0];
const stranger: Address = '0x000000000000000000000000000000000000dEaD';
const nonceU = freshNonce();
const nonceC = freshNonce();
const nonceNever = freshNonce();

let c: TestChain;
let tokenA: Address;
let tokenB: Address;
let all: Log[];
let t1: TransactionReceipt, t2: TransactionReceipt, t3: TransactionReceipt, t4: TransactionReceipt;
let p0: Address, p1: Address, p2: Address, merchant: Address;

const keys = (logs: readonly { transactionHash: `0x${string}` | null; logIndex: number | null }[]) => logs.map(logKey);
const inBlock = (r: TransactionReceipt) => (l: Log) => l.blockNumber === r.blockNumber;

beforeAll(async () => {
  c = await startChain();
  ({
    merchant: { address: merchant },
  } = c.accounts);
  [p0, p1, p2] = c.accounts.payers.map((p) => p.address) as [Address, Address, Address];
  const [k0, k1, k2] = c.accounts.payers.map((p) => p.privateKey) as [`0x${string}`, `0x${string}`, `0x${string}`];
  // Every block a minute after the last, so a wrong timestamp cannot pass by coincidence.
  await c.testClient.setBlockTimestampInterval({ interval: 60 });
  tokenA = await c.deployDevToken(); // OwnershipTransferred, then Mint + Transfer per payer
  tokenB = await c.deployOtherToken(p0, 50n); // OwnershipTransferred, Mint + Transfer
  t1 = await c.transfer(tokenA, k0, merchant, 5n); // Transfer(p0 → merchant)
  t2 = await c.receiveWithAuthorization(tokenA, k1, 7n, nonceU); // AuthorizationUsed(p1, U), Transfer(p1 → merchant)
  t3 = await c.cancelAuthorization(tokenA, k2, nonceC); // AuthorizationCanceled(p2, C)
  t4 = await c.receiveWithAuthorization(tokenA, k0, 3n, nonceC); // AuthorizationUsed(p0, C), Transfer(p0 → merchant)
  all = await c.allLogs();
}, 60_000);

afterAll(async () => {
  await c?.stop();
});

describe('filter shapes', () => {
  const inA = (l: Log) => isAddressEqual(l.address, tokenA);
  const inB = (l: Log) => isAddressEqual(l.address, tokenB);
  const range = { fromBlock: 'earliest', toBlock: 'latest' } as const;
  const cases: [name: string, filter: () => object, expected: (l: Log) => boolean, count: number][] = [
    ['one address', () => ({ ...range, address: tokenA }), inA, 13],
    ['the other address', () => ({ ...range, address: tokenB }), inB, 3],
    ['a list of both addresses', () => ({ ...range, address: [tokenA, tokenB] }), () => true, 16],
    ['a list with a non-matching address', () => ({ ...range, address: [stranger, tokenB] }), inB, 3],
    ['a non-matching address', () => ({ ...range, address: stranger }), () => false, 0],
    ['the Transfer topic on any address', () => ({ ...range, topics: [transferTopic] }), (l) => l.topics[0] === transferTopic, 7],
    [
      'a null wildcard: Transfers to the merchant',
      () => ({ ...range, topics: [transferTopic, null, addressTopic(merchant)] }),
      (l) => l.topics[0] === transferTopic && l.topics[2] === addressTopic(merchant),
      3,
    ],
    [
      'an OR-array of two payers (any event)',
      () => ({ ...range, address: tokenA, topics: [null, [addressTopic(p0), addressTopic(p1)]] }),
      (l) => inA(l) && [addressTopic(p0), addressTopic(p1)].includes(l.topics[1]!),
      5,
    ],
    [
      'an OR-array of event topics',
      () => ({ ...range, topics: [[authorizationUsedTopic, authorizationCanceledTopic]] }),
      (l) => l.topics[0] === authorizationUsedTopic || l.topics[0] === authorizationCanceledTopic,
      3,
    ],
    [
      'a hex range',
      () => ({ fromBlock: hex(t1.blockNumber), toBlock: hex(t2.blockNumber) }),
      (l) => l.blockNumber! >= t1.blockNumber && l.blockNumber! <= t2.blockNumber,
      3,
    ],
    ['earliest to latest with nothing else', () => range, () => true, 16],
  ];

  it.each(cases)('%s', async (_name, filter, expected, count) => {
    const { client, rec } = c.recordedClient();
    const got = await new LogReader(client).getLogs(filter());
    const want = all.filter(expected);
    expect(want).toHaveLength(count);
    expect(keys(got)).toEqual(keys(want));
    expect(rec.count('eth_getLogs')).toBe(1);
  });

  it('blockHash: only that block, and a range given beside it is not sent', async () => {
    const { client, rec } = c.recordedClient();
    const got = await new LogReader(client).getLogs({ blockHash: t2.blockHash, fromBlock: '0x0', toBlock: '0x0' });
    expect(keys(got)).toEqual(keys(all.filter(inBlock(t2))));
    expect(got).toHaveLength(2);
    expect(rec.of('eth_getLogs').map((call) => call.params)).toEqual([[{ blockHash: t2.blockHash }]]);
  });

  it('no range at all means the latest block only; latest..latest the same', async () => {
    const { client } = c.recordedClient();
    const reader = new LogReader(client);
    const want = keys(all.filter(inBlock(t4)));
    expect(await c.plain.getBlockNumber({ cacheTime: 0 })).toBe(t4.blockNumber);
    expect(keys(await reader.getLogs({ address: tokenA }))).toEqual(want);
    expect(keys(await reader.getLogs({ address: tokenA, fromBlock: 'latest', toBlock: 'latest' }))).toEqual(want);
  });

  it('toBlock pending: range plus the pending view as its own call, overlap counted once', async () => {
    const { client, rec } = c.recordedClient();
    const got = await new LogReader(client).getLogs({ address: tokenA, fromBlock: hex(t3.blockNumber), toBlock: 'pending' });
    // Under automine anvil answers the pending view with the latest block's logs: t4's, already in the range.
    expect(keys(got)).toEqual(keys(all.filter((l) => l.blockNumber! >= t3.blockNumber)));
    const getLogs = rec.of('eth_getLogs').map((call) => (call.params as [Record<string, unknown>])[0]);
    expect(getLogs).toEqual([
      { address: tokenA, fromBlock: hex(t3.blockNumber), toBlock: hex(t4.blockNumber) },
      { address: tokenA, fromBlock: 'pending', toBlock: 'pending' },
    ]);
  });

  it('pending..pending is one unsplit call, answered as the node answers it', async () => {
    const { client, rec } = c.recordedClient();
    const got = await new LogReader(client).getLogs({ address: tokenA, fromBlock: 'pending', toBlock: 'pending' });
    const raw = await c.plain.request({ method: 'eth_getLogs', params: [{ address: tokenA, fromBlock: 'pending', toBlock: 'pending' }] });
    expect(keys(got)).toEqual(keys(raw.map((l) => ({ transactionHash: l.transactionHash, logIndex: Number(l.logIndex) }))));
    expect(rec.count('eth_getLogs')).toBe(1);
  });
});

describe('decoded logs', () => {
  let got: DecodedLog[];
  beforeAll(async () => {
    got = await new LogReader(c.recordedClient().client).getLogs({ fromBlock: 'earliest', toBlock: 'latest' });
  });
  const ofTx = (r: TransactionReceipt) => got.filter((l) => l.transactionHash === r.transactionHash);

  it('names and arguments of the token events', () => {
    expect(ofTx(t2).map((l) => [l.eventName, l.args])).toEqual([
      ['AuthorizationUsed', { authorizer: p1, nonce: nonceU }],
      ['Transfer', { from: p1, to: merchant, value: 7n }],
    ]);
    expect(ofTx(t3).map((l) => [l.eventName, l.args])).toEqual([['AuthorizationCanceled', { authorizer: p2, nonce: nonceC }]]);
    expect(ofTx(t1).map((l) => [l.eventName, l.args])).toEqual([['Transfer', { from: p0, to: merchant, value: 5n }]]);
    const mintTransfers = got.filter((l) => l.eventName === 'Transfer' && l.args?.from === zeroAddress && l.args?.to === p1);
    expect(mintTransfers.map((l) => l.args?.value)).toEqual([PAYER_FUNDING]);
  });

  it('keeps events it does not know (Mint, OwnershipTransferred) raw', () => {
    const unknown = got.filter((l) => l.eventName === null);
    expect(unknown).toHaveLength(2 + 4); // two OwnershipTransferred, four Mint
    expect(unknown.every((l) => l.args === null && l.topics.length > 0 && l.data.startsWith('0x'))).toBe(true);
  });

  it('carries the block facts of each log, and the timestamp of its block', async () => {
    expect(keys(got)).toEqual(keys(all));
    for (const [i, log] of got.entries()) {
      const truth = all[i]!;
      expect(isAddressEqual(log.address, truth.address)).toBe(true);
      expect(log).toMatchObject({
        blockNumber: truth.blockNumber,
        blockHash: truth.blockHash,
        transactionHash: truth.transactionHash,
        transactionIndex: truth.transactionIndex,
        logIndex: truth.logIndex,
        removed: false,
        topics: truth.topics,
        data: truth.data,
      });
      expect(log.blockTimestamp).toBe((await c.plain.getBlock({ blockHash: log.blockHash! })).timestamp);
    }
    expect(new Set(got.map((l) => l.blockTimestamp)).size).toBeGreaterThan(5);
  });
});

describe('after many more blocks', () => {
  let t5: TransactionReceipt, t6: TransactionReceipt;
  beforeAll(async () => {
    await c.mine(20);
    t5 = await c.transfer(tokenA, c.accounts.payers[1]!.privateKey, merchant, 1n);
    await c.mine(40);
    t6 = await c.transfer(tokenA, c.accounts.payers[2]!.privateKey, merchant, 1n);
    all = await c.allLogs();
  }, 60_000);

  it('splits a range into spans of maxSpanBlocks: one call per span, every log once', async () => {
    const { client, rec } = c.recordedClient();
    const reader = new LogReader(client, { maxSpanBlocks: 3n });
    const got = await reader.getLogs({ fromBlock: 'earliest', toBlock: 'latest' });
    expect(keys(got)).toEqual(keys(all));
    const latest = t6.blockNumber;
    const ranges = rec
      .of('eth_getLogs')
      .map((call) => rangeOf(call.params as unknown[])!)
      .sort((a, b) => Number(a[0] - b[0]));
    expect(ranges).toHaveLength(Math.ceil(Number(latest + 1n) / 3));
    expect(ranges).toEqual(reader.spans(0n, latest));
    ranges.forEach(([from, to], i) => {
      expect(to - from).toBeLessThanOrEqual(2n);
      expect(from).toBe(i === 0 ? 0n : ranges[i - 1]![1] + 1n);
    });
    expect(ranges.at(-1)![1]).toBe(latest);
  });

  it('a hex sub-range with small spans returns only the logs inside it', async () => {
    const { client, rec } = c.recordedClient();
    const [from, to] = [t2.blockNumber, t5.blockNumber];
    const got = await new LogReader(client, { maxSpanBlocks: 3n }).getLogs({ address: tokenA, fromBlock: hex(from), toBlock: hex(to) });
    expect(keys(got)).toEqual(keys(all.filter((l) => l.blockNumber! >= from && l.blockNumber! <= to)));
    expect(rec.count('eth_getLogs')).toBe(Math.ceil(Number(to - from + 1n) / 3));
  });

  it.each(['safe', 'finalized'] as const)('toBlock %s stops at the block the node gives that tag', async (tag) => {
    const { client } = c.recordedClient();
    const tagged = await c.plain.getBlock({ blockTag: tag });
    const want = all.filter((l) => l.blockNumber! <= tagged.number);
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(all.length);
    const got = await new LogReader(client).getLogs({ fromBlock: 'earliest', toBlock: tag });
    expect(keys(got)).toEqual(keys(want));
  });

  it('halves a span the provider refuses as too wide, until every piece is accepted', async () => {
    const limit = 8n;
    const proxy = await startRpcProxy(c.rpcUrl, {
      reject: (method, params) => {
        const r = method === 'eth_getLogs' ? rangeOf(params) : undefined;
        return r && r[1] - r[0] > limit ? { code: -32005, message: `query exceeds max block range ${limit}` } : undefined;
      },
    });
    try {
      const got = await new LogReader(c.recordedClient(proxy.url).client).getLogs({ fromBlock: 'earliest', toBlock: 'latest' });
      expect(keys(got)).toEqual(keys(all));
      const calls = proxy.calls.filter((call) => call.method === 'eth_getLogs').map((call) => ({ r: rangeOf(call.params)!, rejected: !!call.rejected }));
      expect(calls[0]).toEqual({ r: [0n, t6.blockNumber], rejected: true });
      const accepted = calls
        .filter((call) => !call.rejected)
        .map((call) => call.r)
        .sort((a, b) => Number(a[0] - b[0]));
      expect(accepted.every(([a, b]) => b - a <= limit)).toBe(true);
      accepted.forEach(([a], i) => {
        expect(a).toBe(i === 0 ? 0n : accepted[i - 1]![1] + 1n);
      });
      expect(accepted.at(-1)![1]).toBe(t6.blockNumber);
      const seen = new Set(calls.map((call) => call.r.join('-')));
      for (const {
        r: [a, b],
      } of calls.filter((call) => call.rejected)) {
        expect(b - a).toBeGreaterThan(limit);
        const mid = a + (b - a) / 2n;
        expect(seen.has(`${a}-${mid}`) && seen.has(`${mid + 1n}-${b}`), `both halves of ${a}-${b} were asked`).toBe(true);
      }
      expect(calls.filter((call) => call.rejected).length).toBeGreaterThan(1);
    } finally {
      await proxy.close();
    }
  });

  it('fills blockTimestamp from the block when the provider leaves it out, one block read per block', async () => {
    const proxy = await startRpcProxy(c.rpcUrl, {
      transformResult: (method, result) =>
        method === 'eth_getLogs' ? (result as Record<string, unknown>[]).map(({ blockTimestamp: _dropped, ...log }) => log) : result,
    });
    try {
      const { client, rec } = c.recordedClient(proxy.url);
      const raw = await client.request({ method: 'eth_getLogs', params: [{ fromBlock: 'earliest', toBlock: 'latest' }] });
      expect(raw.some((l) => 'blockTimestamp' in l)).toBe(false);
      rec.reset();
      const got = await new LogReader(client).getLogs({ address: tokenA, fromBlock: 'earliest', toBlock: 'latest' });
      expect(got.length).toBeGreaterThan(5);
      for (const log of got) expect(log.blockTimestamp).toBe((await c.plain.getBlock({ blockHash: log.blockHash! })).timestamp);
      expect(rec.count('eth_getBlockByHash')).toBe(new Set(got.map((l) => l.blockHash)).size);
    } finally {
      await proxy.close();
    }
  });
});

describe('batched nonce lookup', () => {
  const asked = () => [
    { authorizer: p1, nonce: nonceU }, // used (t2)
    { authorizer: p2, nonce: nonceC }, // canceled (t3)
    { authorizer: p0, nonce: nonceNever }, // never consumed
  ];

  it('finds the used and canceled pairs in ONE eth_getLogs call; filtering drops cross-product matches', async () => {
    const { client, rec } = c.recordedClient();
    const got = await new LogReader(client).getLogs({ address: tokenA, fromBlock: 'earliest', toBlock: 'latest', topics: consumptionTopics(asked()) });
    expect(rec.count('eth_getLogs')).toBe(1);
    // (p0, C) was never asked, but p0 and C both are: the cross product matches t4 as well.
    expect(got.map(logPairKey).sort()).toEqual([pairKey(p1, nonceU), pairKey(p2, nonceC), pairKey(p0, nonceC)].sort());
    const wanted = new Set(asked().map((p) => pairKey(p.authorizer, p.nonce)));
    const byPair = new Map(got.filter((l) => wanted.has(logPairKey(l))).map((l) => [logPairKey(l), l]));
    expect([...byPair.keys()].sort()).toEqual([pairKey(p1, nonceU), pairKey(p2, nonceC)].sort());
    expect(byPair.has(pairKey(p0, nonceNever))).toBe(false);
    expect(consumptionFromLog(byPair.get(pairKey(p1, nonceU))!)).toEqual({
      status: 'used',
      transactionHash: t2.transactionHash,
      blockNumber: t2.blockNumber.toString(),
      blockHash: t2.blockHash,
    });
    expect(consumptionFromLog(byPair.get(pairKey(p2, nonceC))!)).toMatchObject({ status: 'canceled', transactionHash: t3.transactionHash });
  });

  it('nonceTopics for one pair matches that pair only', async () => {
    const reader = new LogReader(c.recordedClient().client);
    const got = await reader.getLogs({ address: tokenA, fromBlock: 'earliest', topics: nonceTopics(p0, nonceC) });
    expect(got.map((l) => [l.eventName, l.transactionHash])).toEqual([['AuthorizationUsed', t4.transactionHash]]);
    expect(await reader.getLogs({ address: tokenA, fromBlock: 'earliest', topics: nonceTopics(p0, nonceNever) })).toEqual([]);
  });
});
