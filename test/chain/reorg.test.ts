// What LogReader sees across an anvil_reorg(depth, txBlockPairs). Measured anvil (1.7) behaviour:
//  - the block height is kept: `depth` blocks are replaced by new ones (new hashes) holding only the
//    transactions given in txBlockPairs; the reorged-away transactions are dropped, not re-queued;
//  - eth_getLogs no longer returns the old logs, and eth_getLogs by the old block hash fails
//    ("unknown block");
//  - eth_getFilterChanges does NOT re-deliver the old logs with `removed: true`: the filter simply
//    reports nothing, so code must not rely on removed logs to notice a reorg on anvil.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, getAbiItem, type Address, type Hex, type TransactionReceipt } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { LogReader } from '../../activities/rpc/logReader.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { hex, logKey, startChain, type TestChain } from './support/chain.js';

let c: TestChain;
let token: Address;
let reader: LogReader;
let merchant: Address;
let keys: Hex[];

async function reorg(depth: number, txBlockPairs: [Hex, number][] = []) {
  await c.testClient.request({ method: 'anvil_reorg', params: [depth, txBlockPairs] } as never);
}

const balanceOf = (who: Address) => c.plain.readContract({ address: token, abi: tokenAbi, functionName: 'balanceOf', args: [who] });
const atHeight = (n: bigint) => reader.getLogs({ address: token, fromBlock: hex(n), toBlock: hex(n) });

beforeAll(async () => {
  c = await startChain();
  token = await c.deployDevToken();
  merchant = c.accounts.merchant.address;
  keys = c.accounts.payers.map((p) => p.privateKey);
  reader = new LogReader(c.recordedClient().client);
}, 60_000);

afterAll(async () => {
  await c?.stop();
});

describe('anvil_reorg', () => {
  let transfer: TransactionReceipt;

  it('depth 1, no transactions: the Transfer in the latest block is gone and the height has a new hash', async () => {
    const filter = await c.plain.createEventFilter({ address: token, event: getAbiItem({ abi: tokenAbi, name: 'Transfer' }) });
    const merchantBefore = await balanceOf(merchant);
    transfer = await c.transfer(token, keys[0]!, merchant, 5n);
    const n = transfer.blockNumber;
    expect(await c.plain.getBlockNumber({ cacheTime: 0 })).toBe(n);

    const before = await atHeight(n);
    expect(before.map((l) => [l.eventName, l.transactionHash, l.blockHash, l.removed])).toEqual([
      ['Transfer', transfer.transactionHash, transfer.blockHash, false],
    ]);
    const seen = await c.plain.getFilterChanges({ filter });
    expect(seen.map((l) => [l.transactionHash, l.removed])).toEqual([[transfer.transactionHash, false]]);

    await reorg(1);

    expect(await c.plain.getBlockNumber({ cacheTime: 0 })).toBe(n);
    const replaced = await c.plain.getBlock({ blockNumber: n });
    expect(replaced.hash).not.toBe(transfer.blockHash);
    expect(replaced.transactions).toEqual([]);
    expect(await atHeight(n)).toEqual([]);
    const everything = await reader.getLogs({ address: token, fromBlock: 'earliest', toBlock: 'latest' });
    expect(everything.map((l) => l.transactionHash)).not.toContain(transfer.transactionHash);
    expect(everything.every((l) => !l.removed && l.blockNumber! < n)).toBe(true);
    await expect(reader.getLogs({ blockHash: transfer.blockHash })).rejects.toThrow(/unknown block/);
    await expect(c.plain.getTransactionReceipt({ hash: transfer.transactionHash })).rejects.toThrow(/could not be found/);
    expect(await balanceOf(merchant)).toBe(merchantBefore);
    // anvil reports no removed logs to the filter: nothing at all after the reorg.
    expect(await c.plain.getFilterChanges({ filter })).toEqual([]);
  });

  it('depth 1 with a replacement transaction: the height now holds the new log under the new hash', async () => {
    const old = await c.transfer(token, keys[0]!, merchant, 5n);
    const payer = privateKeyToAccount(keys[1]!);
    const replacement = await payer.signTransaction({
      chainId: c.anvil.chainId,
      type: 'eip1559',
      to: token,
      gas: 100_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1n,
      nonce: await c.plain.getTransactionCount({ address: payer.address }),
      data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [merchant, 9n] }),
    });

    await reorg(1, [[replacement, 0]]);

    const block = await c.plain.getBlock({ blockNumber: old.blockNumber });
    expect(block.hash).not.toBe(old.blockHash);
    expect(block.transactions).toHaveLength(1);
    const now = await atHeight(old.blockNumber);
    expect(now.map((l) => [l.eventName, l.args, l.transactionHash, l.blockHash, l.removed])).toEqual([
      ['Transfer', { from: payer.address, to: merchant, value: 9n }, block.transactions[0], block.hash, false],
    ]);
    expect(now[0]!.blockTimestamp).toBe(block.timestamp);
  });

  it('depth 2: both reorged blocks lose their logs; older logs are untouched', async () => {
    const untouched = await reader.getLogs({ address: token, fromBlock: 'earliest', toBlock: 'latest' });
    const a = await c.transfer(token, keys[0]!, merchant, 1n);
    const b = await c.transfer(token, keys[2]!, merchant, 2n);
    expect(b.blockNumber).toBe(a.blockNumber + 1n);
    const withBoth = await reader.getLogs({ address: token, fromBlock: 'earliest', toBlock: 'latest' });
    expect(withBoth.map(logKey)).toEqual([...untouched, a.logs[0]!, b.logs[0]!].map(logKey));

    await reorg(2);

    expect(await c.plain.getBlockNumber({ cacheTime: 0 })).toBe(b.blockNumber);
    for (const r of [a, b]) expect((await c.plain.getBlock({ blockNumber: r.blockNumber })).hash).not.toBe(r.blockHash);
    const after = await reader.getLogs({ address: token, fromBlock: 'earliest', toBlock: 'latest' });
    expect(after.map(logKey)).toEqual(untouched.map(logKey));
    expect(after.map((l) => l.blockHash)).toEqual(untouched.map((l) => l.blockHash));
  });
});
