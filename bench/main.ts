// `npm run bench`: capture latency, throughput and JSON-RPC calls per capture, measured on the real
// stack (Temporal dev server, anvil with 0.2 s blocks, our token) on free ports. Speed is measured
// here, never asserted by tests.
//   BENCH_SEQUENTIAL (default 10)  captures one after another: latency and calls per capture
//   BENCH_BURST      (default 100) captures at once: throughput, and nonce/duplicate checks
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignTypedDataVersion, signTypedData } from '@metamask/eth-sig-util';
import { createPublicClient, http, type Hex } from 'viem';
import { freePort } from '../devstack/process.js';
import { startStack, type Stack } from '../devstack/stack.js';

const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 10);
const BURST = Number(process.env.BENCH_BURST ?? 100);

function sign(typedData: unknown, privateKey: Hex): Hex {
  return signTypedData({ privateKey: Buffer.from(privateKey.slice(2), 'hex'), data: typedData as never, version: SignTypedDataVersion.V4 }) as Hex;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  // Only capture traffic should reach the counters: no watcher, no periodic checks during the run.
  process.env.AUTHCAP_WATCH = '0';
  process.env.AUTHCAP_RECONCILE_SECONDS = '3600';
  const stateDir = mkdtempSync(join(tmpdir(), 'authcap-bench-'));
  console.log('bench: starting the stack (Temporal dev server, anvil 0.2 s blocks, worker, API)…');
  const stack: Stack = await startStack({
    stateDir, apiPort: await freePort(), rpcPort: await freePort(), temporalPort: await freePort(), temporalUiPort: await freePort(),
    persistent: false, headless: true, blockTimeSeconds: 0.2, captureWaitMs: 120_000, log: () => undefined,
  });
  try {
    const dev = stack.devJson;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${dev.apiUrl}${path}`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${dev.apiKey}` }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const prepare = async (n: number, label: string) =>
      Promise.all(Array.from({ length: n }, async (_, i) => {
        const payer = dev.payers[i % dev.payers.length]!;
        const created = await call('POST', '/v1/authorizations', { orderId: `${label}-${Date.now()}-${i}`, payer: payer.address, amount: '0.01' });
        await call('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: sign(created.body.typedData, payer.privateKey) });
        return created.body.id as string;
      }));

    // 1. One at a time: latency and the node round trips each capture costs.
    const sequentialIds = await prepare(SEQUENTIAL, 'seq');
    const before = stack.worker!.rpcMetrics.snapshot();
    const latencies: number[] = [];
    for (const id of sequentialIds) {
      const t0 = performance.now();
      const res = await call('POST', `/v1/authorizations/${id}/capture`);
      latencies.push(performance.now() - t0);
      if (res.body.state !== 'captured') throw new Error(`capture ${id} ended ${res.body.state}: ${JSON.stringify(res.body.error ?? res.body.lastError)}`);
    }
    const after = stack.worker!.rpcMetrics.snapshot();
    latencies.sort((a, b) => a - b);
    const perCapture = (after.calls - before.calls) / SEQUENTIAL;
    const tripsPerCapture = (after.roundTrips - before.roundTrips) / SEQUENTIAL;
    const byMethod = Object.fromEntries(
      Object.entries(after.byMethod).map(([m, n]) => [m, +((n - (before.byMethod[m] ?? 0)) / SEQUENTIAL).toFixed(1)]).filter(([, n]) => Number(n) > 0),
    );

    // 2. All at once: throughput through one merchant key.
    const burstIds = await prepare(BURST, 'burst');
    const merchantNonceBefore = await createPublicClient({ transport: http(dev.rpcUrl) }).getTransactionCount({ address: dev.merchantAddress });
    const t0 = performance.now();
    const results = await Promise.all(burstIds.map((id) => call('POST', `/v1/authorizations/${id}/capture`)));
    const burstMs = performance.now() - t0;
    const captured = results.filter((r) => r.body.state === 'captured');
    const hashes = new Set(captured.map((r) => r.body.capture.transactionHash));
    const merchantNonceAfter = await createPublicClient({ transport: http(dev.rpcUrl) }).getTransactionCount({ address: dev.merchantAddress });

    const report = {
      sequential: {
        captures: SEQUENTIAL,
        latencyMs: { p50: Math.round(percentile(latencies, 50)), p95: Math.round(percentile(latencies, 95)), max: Math.round(latencies.at(-1)!) },
        jsonRpcCallsPerCapture: +perCapture.toFixed(1),
        httpRoundTripsPerCapture: +tripsPerCapture.toFixed(1),
        callsPerCaptureByMethod: byMethod,
      },
      burst: {
        captures: BURST,
        captured: captured.length,
        distinctTransactions: hashes.size,
        merchantTransactionsSent: merchantNonceAfter - merchantNonceBefore,
        wallMs: Math.round(burstMs),
        capturesPerSecond: +((captured.length / burstMs) * 1000).toFixed(1),
      },
    };
    console.log(JSON.stringify(report, null, 2));
    if (captured.length !== BURST || hashes.size !== BURST || report.burst.merchantTransactionsSent !== BURST) {
      throw new Error('burst: not every capture landed exactly once');
    }
  } finally {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
