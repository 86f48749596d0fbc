// What watching the chain costs the node, with one worker process and with two: the stack idles (no
// authorization open) for a while, and every worker's JSON-RPC calls are counted per block mined.
// The watcher is one per network whatever the number of workers (workflows/chainWatcher.ts), so its
// calls (eth_getLogs, and the eth_blockNumber of each sweep) should not grow with workers; each
// worker's head feed (one WebSocket subscription) stays per worker.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, http } from 'viem';
import { startBenchStack } from './benchStack.js';
import { phase } from './progress.js';
import { rpcCallsByMethod } from './workerCounters.js';

export interface WatchingRun {
  workers: number;
  seconds: number;
  blocks: number;
  /** Every worker's calls per block, by method. */
  perBlock: Record<string, number>;
  /** eth_getLogs per block over all workers: the watcher's reads. */
  getLogsPerBlock: number;
  totalPerBlock: number;
}

export interface WatchingRow {
  runs: WatchingRun[];
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

async function callsOf(urls: string[]): Promise<Record<string, number>> {
  const sum: Record<string, number> = {};
  for (const url of urls) for (const [method, n] of Object.entries(await rpcCallsByMethod(url))) sum[method] = (sum[method] ?? 0) + n;
  return sum;
}

export async function watchingRow(seconds: number): Promise<WatchingRow> {
  const runs: WatchingRun[] = [];
  for (const workers of [1, 2]) {
    const stateDir = mkdtempSync(join(tmpdir(), 'authcap-bench-watching-'));
    const stack = await startBenchStack(stateDir, { workers });
    try {
      const p = phase(`watching with ${workers} worker(s), idle ${seconds} s`, 1);
      const chain = createPublicClient({ transport: http(stack.devJson.rpcUrl) });
      // The watcher's first slice starts once a worker has asked for it: let it settle in.
      await new Promise((r) => setTimeout(r, 10_000));
      const before = await callsOf(stack.workerMetricsUrls);
      const fromBlock = await chain.getBlockNumber({ cacheTime: 0 });
      await new Promise((r) => setTimeout(r, seconds * 1000));
      const after = await callsOf(stack.workerMetricsUrls);
      const blocks = Number((await chain.getBlockNumber({ cacheTime: 0 })) - fromBlock);
      const perBlock = Object.fromEntries(
        Object.entries(after)
          .map(([method, n]) => [method, round3((n - (before[method] ?? 0)) / blocks)] as const)
          .filter(([, n]) => n > 0),
      );
      const run = {
        workers,
        seconds,
        blocks,
        perBlock,
        getLogsPerBlock: perBlock.eth_getLogs ?? 0,
        totalPerBlock: round3(Object.values(perBlock).reduce((a, b) => a + b, 0)),
      };
      p.tick();
      p.done(`${run.getLogsPerBlock} eth_getLogs and ${run.totalPerBlock} calls per block over ${workers} worker(s)`);
      runs.push(run);
    } finally {
      await stack.stop();
      rmSync(stateDir, { recursive: true, force: true });
    }
  }
  return { runs };
}
