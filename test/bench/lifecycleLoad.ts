// `npx tsx test/bench/lifecycleLoad.ts`: the bench's concurrency row alone, for comparing one change at a
// time (about a minute). One stack as `npm start` runs it (the build when fresh, the SQLite file), a
// warm-up, then N whole lifecycles (create → sign → capture → captured) at concurrency C through the
// API, and what they cost: lifecycles/s, CPU ms per lifecycle of each process, the worker's CPU by
// thread, the Temporal server's requests and persistence work by operation. Runs on one shared VM vary
// by ±30 %: alternate the configurations being compared and run each more than once.
//   N (150), C (50), AUTHCAP_CPU_PROFILE_DIR (profile the worker over the measured phase)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../devstack/process.js';
import { stackPids, startBenchStack } from './benchStack.js';
import { cpuMsByThread } from './cpuTime.js';
import { AuthcapApi } from './authcapFlows.js';
import { UsageSampler } from './processUsage.js';
import { pool } from './stats.js';
import { scrapeServerCounters, serverCallsPerLifecycle } from './temporalServerCalls.js';

const n = Number(process.env.N ?? 150);
const c = Number(process.env.C ?? 50);

process.env.AUTHCAP_WORKER_METRICS_PORT = String(await freePort());
const metricsPort = await freePort();
const stateDir = mkdtempSync(join(tmpdir(), 'authcap-load-'));
const stack = await startBenchStack(stateDir, { temporalMetricsPort: metricsPort });
try {
  const dev = stack.devJson;
  const api = new AuthcapApi(dev.apiUrl, dev.apiKey);
  const payer = (i: number) => dev.payers[i % dev.payers.length]!;
  await pool(
    Array.from({ length: 20 }, (_, i) => i),
    10,
    (i) => api.lifecycle(payer(i), 'warm-up'),
  );
  const workerPid = stack.processes.worker!.child.pid!;
  const sampler = new UsageSampler(stackPids(stack));
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const serverBefore = await scrapeServerCounters(metricsUrl, dev.temporalNamespace);
  const threadsBefore = cpuMsByThread(workerPid);
  if (process.env.AUTHCAP_CPU_PROFILE_DIR) stack.processes.worker!.child.kill('SIGUSR2');
  sampler.start();
  const started = performance.now();
  const rows = await pool(
    Array.from({ length: n }, (_, i) => i),
    c,
    (i) => api.lifecycle(payer(i), 'load'),
  );
  const seconds = (performance.now() - started) / 1000;
  const usage = await sampler.stop();
  if (process.env.AUTHCAP_CPU_PROFILE_DIR) stack.processes.worker!.child.kill('SIGUSR2');
  const threads = [...cpuMsByThread(workerPid)]
    .map(([tid, t]) => ({ name: t.name, ms: (t.ms - (threadsBefore.get(tid)?.ms ?? 0)) / n }))
    .filter((t) => t.ms > 0)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 6);
  const p50 = rows.map((r) => r.captureToCapturedMs).sort((a, b) => a - b)[Math.floor(n / 2)];
  console.log(`${n} lifecycles at concurrency ${c}: ${(n / seconds).toFixed(2)}/s, capture p50 ${Math.round(p50 ?? 0)} ms`);
  console.log('CPU ms per lifecycle:', Object.fromEntries(Object.entries(usage).map(([k, v]) => [k, Math.round(v.cpuMs / n)])));
  console.log('worker threads, CPU ms per lifecycle:', threads.map((t) => `${t.name} ${t.ms.toFixed(1)}`).join(', '));
  console.log(
    'Temporal server per lifecycle:',
    JSON.stringify(serverCallsPerLifecycle(serverBefore, await scrapeServerCounters(metricsUrl, dev.temporalNamespace), n)),
  );
} finally {
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
