// The shared block feed the capture waits sleep on: announced blocks over anvil's WebSocket, and a
// plain timeout (the caller then reads the node itself) when there is no socket or it goes silent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, defineChain, http, type Chain } from 'viem';
import { HeadFeed } from '../../activities/rpc/headFeed.js';
import { startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';

let anvil: Anvil;
let chain: Chain;

beforeAll(async () => {
  anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0.2 });
  chain = defineChain({ id: anvil.chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.rpcUrl] } } });
});

afterAll(async () => {
  await anvil?.stop();
});

describe('HeadFeed', () => {
  it('wakes a wait when the next block is announced, long before its timeout', async () => {
    const feed = new HeadFeed(chain, anvil.rpcUrl.replace(/^http/, 'ws'));
    try {
      const first = await feed.nextHead(-1n, 5_000);
      expect(first).toBeTypeOf('bigint');
      const started = Date.now();
      const next = await feed.nextHead(first!, 10_000);
      expect(next!).toBeGreaterThan(first!);
      expect(Date.now() - started).toBeLessThan(5_000);
      const onNode = await createPublicClient({ transport: http(anvil.rpcUrl) }).getBlockNumber({ cacheTime: 0 });
      expect(onNode).toBeGreaterThanOrEqual(next!);
      // A block already announced answers at once.
      expect(await feed.nextHead(first!, 10_000)).toBeGreaterThan(first!);
    } finally {
      feed.stop();
    }
  });

  it('without a WebSocket, a wait ends at its timeout with no block, and stop() releases waiters', async () => {
    const feed = new HeadFeed(chain, undefined);
    expect(await feed.nextHead(0n, 50)).toBeUndefined();
    const pending = feed.nextHead(0n, 60_000);
    feed.stop();
    expect(await pending).toBeUndefined();
  });
});
