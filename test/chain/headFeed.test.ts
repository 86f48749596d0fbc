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
  chain = defineChain({
    id: anvil.chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
});

afterAll(async () => {
  await anvil?.stop();
});

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  for (const started = Date.now(); !check(); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
  }
}

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

  it('says it is live once subscribed, with the time of the last announced block', async () => {
    const feed = new HeadFeed(chain, anvil.rpcUrl.replace(/^http/, 'ws'));
    try {
      expect(feed.status()).toMatchObject({ state: 'connecting', live: false });
      feed.connect();
      await until(() => feed.status().lastHeadAt !== null);
      expect(feed.status()).toMatchObject({ state: 'live', live: true });
      expect(Date.now() - Date.parse(feed.status().lastHeadAt!)).toBeLessThan(5_000);
    } finally {
      feed.stop();
    }
  });

  it('a refused WebSocket is failing (waits poll), retried, and live again once the node answers', async () => {
    const port = await freePort();
    const feed = new HeadFeed(chain, `ws://127.0.0.1:${port}`);
    let second: Anvil | undefined;
    try {
      const changes: string[] = [];
      feed.onStateChange = (status) => changes.push(status.state);
      feed.connect();
      await until(() => feed.status().state === 'failing');
      expect(feed.status()).toMatchObject({ live: false, lastHeadAt: null, detail: expect.stringMatching(/failed.*poll the node/) });
      expect(feed.status().detail).not.toContain(`ws://127.0.0.1:${port}`);
      // A wait meanwhile ends at its own timeout: the caller reads the node itself.
      expect(await feed.nextHead(0n, 100)).toBeUndefined();
      // The node comes up on that port: the next retry subscribes, and blocks wake waits again.
      second = await startAnvil({ port, blockTimeSeconds: 0.2 });
      await until(() => feed.status().live, 20_000);
      expect(await feed.nextHead(0n, 10_000)).toBeTypeOf('bigint');
      expect(changes).toEqual(['failing', 'live']);
    } finally {
      feed.stop();
      await second?.stop();
    }
  }, 40_000);

  it('without a WebSocket, a wait ends at its timeout with no block, and stop() releases waiters', async () => {
    const feed = new HeadFeed(chain, undefined);
    expect(feed.status()).toMatchObject({ state: 'off', live: false });
    expect(await feed.nextHead(0n, 50)).toBeUndefined();
    const pending = feed.nextHead(0n, 60_000);
    feed.stop();
    expect(await pending).toBeUndefined();
  });
});
