// Lifecycles per second at concurrency 50 spread over two networks, against the same load on one of
// them, on one stack that serves both (the dev stack's `networks: 2`: two anvils, one worker and API
// set). Both chains are the dev chain's, so the row says whether authcap's own share grows with a
// network (a relayer, a watcher and a head feed more), not what a second real chain would allow.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../devstack/process.js';
import { startBenchStack } from './benchStack.js';
import { AuthcapApi, type Payer } from './authcapFlows.js';
import { phase } from './progress.js';
import { distribution, pool, round, type Distribution } from './stats.js';

export interface NetworksRun {
  networks: number;
  n: number;
  lifecyclesPerSecond: number;
  captured: Distribution;
  perNetwork: Record<string, number>;
}

export interface TwoNetworksRow {
  concurrency: number;
  oneNetwork: NetworksRun;
  twoNetworks: NetworksRun;
  /** twoNetworks / oneNetwork lifecycles per second: the target is at least 0.9. */
  ratio: number;
}

export async function twoNetworksRow(n: number, concurrency = 50): Promise<TwoNetworksRow> {
  const stateDir = mkdtempSync(join(tmpdir(), 'authcap-bench-networks-'));
  const stack = await startBenchStack(stateDir, { networks: 2, moreRpcPorts: [await freePort()] });
  try {
    const dev = stack.devJson;
    const api = new AuthcapApi(dev.apiUrls, dev.apiKey);
    const payers: Payer[] = dev.payers;
    const networks = dev.networks.map((net) => net.network);
    const run = async (spread: string[]): Promise<NetworksRun> => {
      const p = phase(`concurrency ${concurrency} over ${spread.length} network(s)`, n);
      const t0 = performance.now();
      const rows = await pool(
        Array.from({ length: n }, (_, i) => i),
        concurrency,
        async (i) => {
          const network = spread[i % spread.length]!;
          const r = await api.lifecycle(payers[i % payers.length]!, `bench-networks${spread.length}`, { network, token: 'USDC' });
          p.tick();
          return { ...r, network };
        },
      );
      const seconds = (performance.now() - t0) / 1000;
      const perNetwork: Record<string, number> = {};
      for (const r of rows) perNetwork[r.network] = (perNetwork[r.network] ?? 0) + 1;
      const result = {
        networks: spread.length,
        n,
        lifecyclesPerSecond: round(n / seconds),
        captured: distribution(rows.map((r) => r.captureToCapturedMs)),
        perNetwork,
      };
      p.done(`${result.lifecyclesPerSecond} lifecycles/s, capture p50 ${result.captured.p50} ms`);
      return result;
    };
    // Warm both networks' relayers and feeds first: the first capture on each starts its relayer.
    await run(networks).catch(() => undefined);
    const oneNetwork = await run([networks[0]!]);
    const twoNetworks = await run(networks);
    return { concurrency, oneNetwork, twoNetworks, ratio: round(twoNetworks.lifecyclesPerSecond / oneNetwork.lifecyclesPerSecond) };
  } finally {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
