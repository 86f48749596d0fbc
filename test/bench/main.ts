// `npm run bench [-- --quick]`: authcap against two baselines on one anvil chain and token, in the
// configuration `npm start` runs (worker and API as their own processes, watcher and periodic checks
// on, the API's own capture wait, callers waiting with GET ?wait after a 202, as docs/accepting-payments.md recommends). Speed is measured here, never by the test suites.
//   baseline A  a bare viem script: sign, send receiveWithAuthorization, poll receipt and depth at 20 ms
//   baseline B  x402's exact-scheme facilitator (@x402/evm): verify and settle a TransferWithAuthorization
//   refunds     against a bare viem transfer(payer, amount) from a key holding the token (test/bench/refundFlows.ts)
// Writes test/bench/results/latest-<kind>.json, .md and .svg (kind: quick, full, quick-postgres, full-postgres),
// replacing the previous run of that kind; exits 1 if the run's exactly-once audit fails.
// `--only holds`: the holds row alone on its own stack (test/bench/holdRow.ts: held payments against bare
// escrow calls, plain payments beside them); writes latest-holds-<kind>.json and .md only (BENCH_OUT_DIR: elsewhere).
// `--only facilitator`: the facilitator row alone (test/bench/facilitatorRow.ts: authcap's /x402/verify + /x402/settle
// against baseline B one at a time and at concurrency 50, every answer judged on the chain); writes
// latest-facilitator-<kind>.json and .md only. The full bench runs that row too, on a stack of its own.
import { twoNetworksRow } from './twoNetworks.js';
import { watchingRow } from './watcherCalls.js';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createTestClient, http, parseEther, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { freePort } from '../../devstack/process.js';
import type { Stack } from '../../devstack/stack.js';
import { stackPids, startBenchStack } from './benchStack.js';
import { readVariable } from '../../runtime/settings/read.js';
import { HISTORY_SHARDS, TEMPORAL_SERVER_VERSION } from '../../devstack/temporalOnPostgres.js';
import { distDir, processCommand } from '../../devstack/build.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { AuthcapApi, type Payer } from './authcapFlows.js';
import { createBareBaseline } from './baselines/bareCapture.js';
import { createX402Baseline } from './baselines/x402Facilitator.js';
import { auditExactlyOnce, merchantNonce } from './exactlyOnce.js';
import { UsageSampler, type UsageByProcess } from './processUsage.js';
import { phase } from './progress.js';
import { costMarkdown, targetsOf, writeResults } from './report.js';
import { whereItGoesMarkdown } from './whereItGoes.js';
import type { BenchResults, ConcurrencyRow, RpcCost } from './results.js';
import { distribution, perUnit, pool, ratio, total } from './stats.js';
import { scrapeServerCounters, serverCallsPerLifecycle } from './temporalServerCalls.js';
import { summarizeProfiles } from './cpuProfile.js';
import { profileSplit } from './profileSplit.js';
import { runTemporalFloor, type FloorFigures } from './temporalFloor.js';
import { temporalCostOf } from './temporalCost.js';
import { useTemporalTls } from './temporalConnection.js';
import { spread, temporalPerLifecycle } from './lifecycleCost.js';
import { captureBurstWithKeys } from './keysComparison.js';
import { rpcCallsByMethod } from './workerCounters.js';
import { runRefundRows } from './refundFlows.js';
import { registerReceiver, startWebhookReceiver, webhookFigures, type WebhookReceiver } from './webhookReceiver.js';
import { costTargetsMarkdown, costTargetsOf } from './costTargets.js';
import { runHoldRows } from './holdRow.js';
import { holdsMarkdown, writeHoldResults } from './holdReport.js';
import { facilitatorRowOnOwnStack, runFacilitatorRow } from './facilitatorRow.js';
import { facilitatorMarkdown, writeFacilitatorResults } from './facilitatorReport.js';

const quick = process.argv.includes('--quick');
/** --floor <run.mjs>: Temporal's floor run first, in the same sitting (test/bench/temporalFloor.ts). */
const floorScript = process.argv.includes('--floor') ? process.argv[process.argv.indexOf('--floor') + 1] : undefined;
/** The workflow bundle the bench's worker runs (`npm run bench` builds dist/ first): names the profile's sandbox frames. */
const prebuiltBundle = join(distDir, 'workflow-bundle.js');
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
if (only !== undefined && only !== 'holds' && only !== 'facilitator') throw new Error(`--only ${only}: the rows that run alone are holds and facilitator`);
// --profile: V8 CPU profiles of the worker and the API over the highest-concurrency row (SIGUSR2,
// runtime/cpuProfiler.ts), summarized into the results. The profiler costs CPU too: compare the cost
// table of runs without it.
// The worker runs its workflows in the profiled thread then (AUTHCAP_PROFILE_WORKFLOWS), so the split
// (test/bench/profileSplit.ts) sees the machine, the interceptors and the workflow runtime too.
const profileDir = process.argv.includes('--profile') ? mkdtempSync(join(tmpdir(), 'authcap-profiles-')) : undefined;
if (profileDir) {
  process.env.AUTHCAP_CPU_PROFILE_DIR = profileDir;
  process.env.AUTHCAP_PROFILE_WORKFLOWS = '1';
}
const plan = quick
  ? {
      sequential: 20,
      sequentialB: 10,
      sweep: [
        [1, 10],
        [10, 40],
        [50, 100],
      ],
      creates: 300,
      stores: 100,
      burstCallers: 100,
      open: 1_000,
      idleSeconds: 20,
      refunds: { sequential: 20, partial: 10, concurrent: [10, 40] as [number, number] },
      holds: {
        sequential: 10,
        sweep: [
          [10, 30],
          [50, 100],
        ] as [number, number][],
      },
      facilitator: { sequential: 20, concurrent: [50, 150] as [number, number], resettle: 10 },
    }
  : {
      sequential: 50,
      sequentialB: 30,
      sweep: [
        [1, 30],
        [10, 200],
        [50, 400],
        [200, 600],
      ],
      creates: 1_000,
      stores: 300,
      burstCallers: 100,
      open: 10_000,
      idleSeconds: 60,
      refunds: { sequential: 50, partial: 30, concurrent: [10, 100] as [number, number] },
      holds: {
        sequential: 30,
        sweep: [
          [10, 100],
          [50, 200],
        ] as [number, number][],
      },
      facilitator: { sequential: 50, concurrent: [50, 300] as [number, number], resettle: 10 },
    };
const openOverride = process.env.BENCH_OPEN ? Number(process.env.BENCH_OPEN) : undefined;
if (openOverride !== undefined) plan.open = openOverride;
// The holds row's size: HOLDS_N held payments one at a time, then HOLDS_SWEEP (concurrency:payments,…).
if (process.env.HOLDS_N) plan.holds.sequential = Number(process.env.HOLDS_N);
if (process.env.HOLDS_SWEEP !== undefined)
  plan.holds.sweep = process.env.HOLDS_SWEEP.split(',')
    .filter(Boolean)
    .map((pair) => pair.split(':').map(Number) as [number, number]);

// The facilitator row's size: FACILITATOR_N payments one at a time (each side), FACILITATOR_C as concurrency:payments.
if (process.env.FACILITATOR_N) plan.facilitator.sequential = Number(process.env.FACILITATOR_N);
if (process.env.FACILITATOR_C) plan.facilitator.concurrent = process.env.FACILITATOR_C.split(':').map(Number) as [number, number];

const startedAt = new Date();
const started = performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts or stops (and writes) the worker's and the API's CPU profiles. */
function toggleProfilers(stack: Stack): void {
  for (const proc of [stack.processes.worker, stack.processes.api]) proc?.child.kill('SIGUSR2');
}

/** The floor's figures, printed as they come. */
function floorSitting(script: string): FloorFigures {
  const p = phase("Temporal's floor (variant A, 300 at concurrency 50)", 1);
  const floor = runTemporalFloor(script, 300, 50);
  p.done(`${floor.lifecycles_per_s} lifecycles/s, ${floor.total_cpu_ms_per_lc} CPU ms per lifecycle, capture p95 ${floor.capture_p95_ms} ms`);
  return floor;
}

async function main(): Promise<number> {
  // The shipped configuration; the only addition is the worker's metrics port, which the bench reads.
  process.env.AUTHCAP_WORKER_METRICS_PORT = String(await freePort());
  const temporalMetricsPort = await freePort();
  const stateDir = mkdtempSync(join(tmpdir(), 'authcap-bench-'));
  // The merchant's one webhook endpoint is the bench's own receiver (registered in run()), no other.
  delete process.env.AUTHCAP_WEBHOOK_URL;
  const receiver = await startWebhookReceiver();
  process.stderr.write('bench: starting the stack as npm start does (Temporal dev server, anvil 0.2 s blocks, worker and API processes)…\n');
  const stack: Stack = await startBenchStack(stateDir, { temporalMetricsPort });
  if (only === 'holds' || only === 'facilitator') {
    try {
      return only === 'holds' ? await holdsOnly(stack, `http://127.0.0.1:${temporalMetricsPort}/metrics`, receiver) : await facilitatorOnly(stack, receiver);
    } finally {
      await stack.stop();
      await receiver.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  }
  const floor = floorScript ? floorSitting(floorScript) : undefined;
  let results: BenchResults;
  try {
    results = await run(stack, `http://127.0.0.1:${temporalMetricsPort}/metrics`, receiver);
  } finally {
    await stack.stop();
    await receiver.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
  if (profileDir) {
    const files = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'));
    const filesOf = (name: string) => files.filter((f) => f.startsWith(`${name}-`)).map((f) => join(profileDir, f));
    results.profile = Object.fromEntries(['worker', 'api'].map((name) => [name, summarizeProfiles(filesOf(name))]));
    const profiledRow = results.concurrency.at(-1)!;
    results.profileSplit = {
      lifecycles: profiledRow.authorizations,
      concurrency: profiledRow.concurrency,
      worker: profileSplit(filesOf('worker'), profiledRow.authorizations, prebuiltBundle),
      api: profileSplit(filesOf('api'), profiledRow.authorizations),
    };
    for (const name of ['worker', 'api'] as const) {
      process.stderr.write(`bench: profile split, ${name}, CPU ms per lifecycle at concurrency ${profiledRow.concurrency}:\n`);
      for (const row of results.profileSplit[name])
        process.stderr.write(`bench:   ${row.ms.toFixed(2).padStart(7)} ms ${row.share.toFixed(1).padStart(5)}%  ${row.part}\n`);
    }
    process.stderr.write(`bench: CPU profiles in ${profileDir}\n`);
  }
  // Throughput grows with merchant keys: the same burst on a stack with one key, then four.
  results.keys = [];
  for (const keys of [1, 4]) results.keys.push(await captureBurstWithKeys(keys, plan.stores, plan.burstCallers));
  // A second network costs authcap a relayer, a watcher and a head feed: the c50 row over two networks.
  // At least 300 lifecycles a run: fewer are a handful of waves at concurrency 50, too few to compare.
  results.networks = await twoNetworksRow(Math.max(300, plan.sweep.find(([c]) => c === 50)![1]!), 50);
  // Watching the chain is one watcher per network, whatever the number of workers: node calls per block with 1 and 2.
  results.watching = await watchingRow(quick ? 30 : 90);
  // A settle is on the request path of a paid HTTP call: authcap as an x402 facilitator against x402's own.
  results.facilitator = await facilitatorRowOnOwnStack(plan.facilitator);
  const ok = results.exactlyOnce.ok && results.keys.every((k) => k.exactlyOnceOk) && results.facilitator.audit.ok;
  if (floor) results.floor = floor;
  results.targets = targetsOf(results);
  results.costTargets = costTargetsOf(results);
  const written = await writeResults(results);
  process.stderr.write(`bench: wrote ${written.join(', ')}\n\n${costMarkdown(results)}\n${whereItGoesMarkdown(results)}\n${costTargetsMarkdown(results)}\n`);
  return ok ? 0 : 1;
}

async function run(stack: Stack, temporalMetricsUrl: string, receiver: WebhookReceiver): Promise<BenchResults> {
  const dev = stack.devJson;
  useTemporalTls(dev.temporalTls);
  const metricsUrl = `http://127.0.0.1:${process.env.AUTHCAP_WORKER_METRICS_PORT}/metrics`;
  const sampler = new UsageSampler(stackPids(stack));
  const chain = createPublicClient({ transport: http(dev.rpcUrl) });
  const api = new AuthcapApi(dev.apiUrls, dev.apiKey);
  const payers: Payer[] = dev.payers;
  const payerAt = (i: number) => payers[i % payers.length]!;
  const fromBlock = await chain.getBlockNumber();
  const merchantNonceBefore = await merchantNonce(dev.rpcUrl, dev.merchantAddress);
  const captureHashes: Hex[] = [];
  const domain = {
    name: await chain.readContract({ address: dev.tokenAddress, abi: tokenAbi, functionName: 'name' }),
    version: await chain.readContract({ address: dev.tokenAddress, abi: tokenAbi, functionName: 'version' }),
    chainId: dev.chainId,
    verifyingContract: dev.tokenAddress,
  };
  const fundedKey = async () => {
    const key = generatePrivateKey();
    await createTestClient({ mode: 'anvil', transport: http(dev.rpcUrl) }).setBalance({ address: privateKeyToAccount(key).address, value: parseEther('1000') });
    return key;
  };
  const bare = createBareBaseline({
    rpcUrl: dev.rpcUrl,
    chainId: dev.chainId,
    tokenAddress: dev.tokenAddress,
    domain,
    submitterKey: await fundedKey(),
    confirmations: 1,
  });

  const measureIdle = async (open: number, seconds: number) => {
    const p = phase(`idle, ${open} open`, seconds);
    const before = await rpcCallsByMethod(metricsUrl);
    sampler.start();
    for (let s = 0; s < seconds; s++) {
      await sleep(1_000);
      p.tick();
    }
    const usage = await sampler.stop();
    const byMethod = perUnit(before, await rpcCallsByMethod(metricsUrl), seconds);
    p.done(`worker ${usage.worker?.cpuPercent}% CPU ${usage.worker?.rssMb} MB, Temporal ${usage.temporal?.cpuPercent}%, ${total(byMethod)} node calls/s`);
    return { open, seconds, rpcPerSecond: { byMethod, total: total(byMethod) }, usage };
  };
  const idle: BenchResults['idle'] = [await measureIdle(0, quick ? 10 : 30)];

  // Latency one capture at a time: the floor, the x402 facilitator, authcap.
  let p = phase('baseline A, one at a time', plan.sequential);
  const aBefore = bare.rpcCalls();
  const aRuns = [];
  for (let i = 0; i < plan.sequential; i++) {
    aRuns.push(await bare.capture(payerAt(i), 10_000n));
    p.tick();
  }
  const aRpc = perUnit(aBefore, bare.rpcCalls(), plan.sequential);
  const aLatency = { preconfirmed: distribution(aRuns.map((r) => r.preconfirmedMs)), captured: distribution(aRuns.map((r) => r.capturedMs)) };
  p.done(`captured p50 ${aLatency.captured.p50} ms, ${total(aRpc)} node calls each`);

  let bLatency: BenchResults['latency']['baselineB'];
  let bRpc: RpcCost | null = null;
  p = phase('baseline B (x402), one at a time', plan.sequentialB);
  try {
    const x402 = await createX402Baseline({
      rpcUrl: dev.rpcUrl,
      chainId: dev.chainId,
      tokenAddress: dev.tokenAddress,
      facilitatorKey: await fundedKey(),
      payTo: privateKeyToAccount(await fundedKey()).address,
    });
    const before = x402.rpcCalls();
    const runs = [];
    for (let i = 0; i < plan.sequentialB; i++) {
      runs.push(await x402.pay(payerAt(i), 10_000n));
      p.tick();
    }
    const byMethod = perUnit(before, x402.rpcCalls(), plan.sequentialB);
    bRpc = { byMethod, total: total(byMethod) };
    bLatency = { settled: distribution(runs.map((r) => r.ms)) };
    p.done(`settled p50 ${bLatency.settled.p50} ms, ${bRpc.total} node calls each`);
  } catch (err) {
    bLatency = { error: (err as Error).message.split('\n')[0]! };
    p.done(`failed: ${bLatency.error}`);
  }

  // Merchants run with a webhook endpoint: every row from here on delivers its events to one.
  p = phase('registering the webhook endpoint', 1);
  const webhook = await registerReceiver(api, receiver);
  p.done(`${webhook.endpointId} → ${webhook.url}, every event type`);

  p = phase('authcap, one at a time', plan.sequential);
  const prepared = [];
  for (let i = 0; i < plan.sequential; i++) {
    const created = await api.create(payerAt(i), 'bench-seq');
    await api.store(payerAt(i), created);
    prepared.push(created.id);
  }
  const cBefore = await rpcCallsByMethod(metricsUrl);
  const cRuns = [];
  for (const id of prepared) {
    const wallStart = Date.now();
    const captured = await api.capture(id);
    captureHashes.push(captured.body.capture.transactionHash);
    cRuns.push({
      captured: captured.ms,
      preconfirmed: Math.max(0, Date.parse(captured.body.capture.preconfirmedAt ?? captured.body.capture.confirmedAt) - wallStart),
    });
    p.tick();
  }
  const cRpc = perUnit(cBefore, await rpcCallsByMethod(metricsUrl), plan.sequential);
  const cLatency = { preconfirmed: distribution(cRuns.map((r) => r.preconfirmed)), captured: distribution(cRuns.map((r) => r.captured)) };
  const { cost: temporalPerAuthorization, captureProfileMs } = await temporalCostOf(dev.temporalAddress, dev.temporalNamespace, prepared.slice(0, 10));
  p.done(`captured p50 ${cLatency.captured.p50} ms (${ratio(cLatency.captured.p50, aLatency.captured.p50)}× A), ${total(cRpc)} node calls each`);

  // Throughput against concurrency: the floor and whole authcap lifecycles through the API.
  const concurrency: ConcurrencyRow[] = [];
  for (const [c, n] of plan.sweep as [number, number][]) {
    p = phase(`concurrency ${c}: baseline A`, n);
    let t0 = performance.now();
    const aRows = await pool(
      Array.from({ length: n }, (_, i) => i),
      c,
      async (i) => {
        const r = await bare.capture(payerAt(i), 10_000n);
        p.tick();
        return r;
      },
    );
    const aSeconds = (performance.now() - t0) / 1000;
    p.done();
    p = phase(`concurrency ${c}: authcap lifecycle`, n);
    const getsBefore = api.getLatencies.length;
    const profiled = profileDir !== undefined && c === Math.max(...plan.sweep.map(([x]) => x!));
    if (profiled) toggleProfilers(stack);
    const serverBefore = await scrapeServerCounters(temporalMetricsUrl, dev.temporalNamespace);
    const deliveriesBefore = receiver.deliveries();
    sampler.start();
    t0 = performance.now();
    const windowStartMs = Date.now();
    const rows = await pool(
      Array.from({ length: n }, (_, i) => i),
      c,
      async (i) => {
        const r = await api.lifecycle(payerAt(i), `bench-c${c}`);
        p.tick();
        return r;
      },
    );
    const seconds = (performance.now() - t0) / 1000;
    const usage: UsageByProcess = await sampler.stop();
    const windowEndMs = Date.now();
    const serverCalls = serverCallsPerLifecycle(serverBefore, await scrapeServerCounters(temporalMetricsUrl, dev.temporalNamespace), n);
    if (profiled) toggleProfilers(stack);
    captureHashes.push(...rows.map((r) => r.transactionHash));
    const captured = distribution(rows.map((r) => r.captureToCapturedMs));
    const aCaptured = distribution(aRows.map((r) => r.capturedMs));
    const row: ConcurrencyRow = {
      concurrency: c,
      authorizations: n,
      baselineA: { capturesPerSecond: round(n / aSeconds), captured: aCaptured },
      authcap: {
        lifecyclesPerSecond: round(n / seconds),
        capturedFromRequest: captured,
        preconfirmedFromRequest: distribution(rows.map((r) => r.captureToPreconfirmedMs)),
        lifecycle: distribution(rows.map((r) => r.lifecycleMs)),
        get: distribution(api.getLatencies.slice(getsBefore)),
        ratioToA: {
          throughput: ratio(n / seconds, n / aSeconds),
          capturedP50: ratio(captured.p50, aCaptured.p50),
          capturedP95: ratio(captured.p95, aCaptured.p95),
        },
      },
      usage,
      serverCalls,
      webhookDeliveries: receiver.deliveries() - deliveriesBefore,
    };
    row.costPerLifecycle = await costPerLifecycle(
      dev,
      usage,
      rows.map((r) => r.id),
      { startMs: windowStartMs, endMs: windowEndMs },
    );
    concurrency.push(row);
    p.done(
      `${row.authcap.lifecyclesPerSecond} lifecycles/s (A: ${row.baselineA.capturesPerSecond} captures/s), capture p50 ${captured.p50} ms, ${serverCalls.writes?.UpdateWorkflowExecution} UpdateWorkflowExecution and ${serverCalls.writes?.CreateWorkflowExecution} CreateWorkflowExecution per lifecycle, ${row.webhookDeliveries} webhook deliveries`,
    );
  }

  // Creates, and create + sign, at concurrency 50; the stored ones then feed a capture burst.
  p = phase('creates at concurrency 50', plan.creates);
  let t0 = performance.now();
  const createTimes: number[] = [];
  await pool(
    Array.from({ length: plan.creates }, (_, i) => i),
    50,
    async (i) => {
      const s = performance.now();
      await api.create(payerAt(i), 'bench-open');
      createTimes.push(performance.now() - s);
      p.tick();
    },
  );
  const creates = { concurrency: 50, n: plan.creates, perSecond: round(plan.creates / ((performance.now() - t0) / 1000)), latency: distribution(createTimes) };
  p.done(`${creates.perSecond}/s, p95 ${creates.latency.p95} ms`);

  p = phase('create + sign at concurrency 50', plan.stores);
  t0 = performance.now();
  const storeTimes: number[] = [];
  const stored = await pool(
    Array.from({ length: plan.stores }, (_, i) => i),
    50,
    async (i) => {
      const s = performance.now();
      const created = await api.create(payerAt(i), 'bench-burst');
      await api.store(payerAt(i), created);
      storeTimes.push(performance.now() - s);
      p.tick();
      return created.id;
    },
  );
  const createAndSign = {
    concurrency: 50,
    n: plan.stores,
    perSecond: round(plan.stores / ((performance.now() - t0) / 1000)),
    latency: distribution(storeTimes),
  };
  p.done(`${createAndSign.perSecond}/s, p95 ${createAndSign.latency.p95} ms`);

  p = phase(`capture burst, ${plan.burstCallers} callers waiting with GET ?wait`, stored.length);
  const getsBefore = api.getLatencies.length;
  t0 = performance.now();
  const burst = await pool(stored, plan.burstCallers, async (id) => {
    const r = await api.capture(id);
    p.tick();
    return r;
  });
  const burstSeconds = (performance.now() - t0) / 1000;
  captureHashes.push(...burst.map((r) => r.body.capture.transactionHash));
  const captureBurst = {
    callers: plan.burstCallers,
    n: stored.length,
    capturesPerSecond: round(stored.length / burstSeconds),
    captured: distribution(burst.map((r) => r.ms)),
    get: distribution(api.getLatencies.slice(getsBefore)),
  };
  p.done(`${captureBurst.capturesPerSecond} captures/s, GET p95 ${captureBurst.get.p95} ms`);

  // Open authorizations waiting: top the drafts up to the plan's number, then watch the stack idle.
  const more = Math.max(0, plan.open - plan.creates);
  p = phase(`opening ${more} more drafts`, more);
  await pool(
    Array.from({ length: more }, (_, i) => i),
    50,
    async (i) => {
      await api.create(payerAt(i), 'bench-open');
      p.tick();
    },
  );
  p.done();
  await sleep(5_000);
  idle.push(await measureIdle(plan.creates + more, plan.idleSeconds));

  // Refunds and partial captures against their floor: a plain transfer from a key holding
  // the token. Last, so every row before is measured as it was before refunds existed (a worker that
  // has carried refunds holds more in its cache and heap when it idles).
  const refundRun = await runRefundRows({ dev, api, chain, sampler, metricsUrl, temporalMetricsUrl, bare, floorKey: await fundedKey(), payerAt }, plan.refunds);
  captureHashes.push(...refundRun.captureHashes);

  p = phase('exactly-once audit', 1);
  const exactlyOnce = await auditExactlyOnce({
    rpcUrl: dev.rpcUrl,
    tokenAddress: dev.tokenAddress,
    fromBlock,
    authcapCaptureHashes: captureHashes,
    merchantNonceBefore,
    merchant: dev.merchantAddress,
    refunds: refundRun.refunds,
  });
  p.done(
    exactlyOnce.ok
      ? `ok: ${exactlyOnce.authcapCaptures} captures, ${exactlyOnce.refunds?.refunds ?? 0} refunds, ${exactlyOnce.merchantTransactions} merchant transactions, no nonce used twice`
      : `FAILED: ${JSON.stringify(exactlyOnce)}`,
  );
  p = phase('webhook deliveries settling', 1);
  await receiver.settle();
  const webhookRun = webhookFigures(webhook, receiver);
  p.done(`${webhookRun.deliveries} deliveries received, ${webhookRun.distinctEventIds} distinct event ids`);

  const results: Omit<BenchResults, 'targets' | 'keys'> = {
    version: 1,
    mode: quick ? 'quick' : 'full',
    startedAt: startedAt.toISOString(),
    durationSeconds: Math.round((performance.now() - started) / 1000),
    command: `npm run bench${quick ? ' -- --quick' : ''}`,
    machine: machine(),
    temporalTopology: dev.temporalTopology,
    configuration: `npm start defaults${
      dev.temporalTopology === 'postgres'
        ? ` on the production shape (AUTHCAP_TEMPORAL=postgres): the Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL, ${HISTORY_SHARDS} history shards, SQL visibility, ${stack.processes.workers?.length} worker and ${stack.processes.apis?.length} API processes (calls spread over the APIs)`
        : `: Temporal dev server on its SQLite file (pragmas: ${readVariable('AUTHCAP_SQLITE_PRAGMAS').join(', ') || 'SQLite defaults'}), worker and API processes`
    }, worker and API ${processCommand('worker/main.ts').built ? 'from the compiled build (dist/)' : 'from source (tsx): the build was stale'}, anvil 0.2 s blocks, 1 confirmation, watcher on (periodic per-authorization checks off), API capture wait 15 s, payload codec on, callers waiting with GET ?wait=30 after a 202, one webhook endpoint registered and answering (${webhookRun.deliveries} deliveries received)`,
    latency: {
      baselineA: aLatency,
      baselineB: bLatency,
      authcap: cLatency,
      ratioToA: {
        preconfirmed: {
          p50: ratio(cLatency.preconfirmed.p50, aLatency.preconfirmed.p50),
          p95: ratio(cLatency.preconfirmed.p95, aLatency.preconfirmed.p95),
          p99: ratio(cLatency.preconfirmed.p99, aLatency.preconfirmed.p99),
        },
        captured: {
          p50: ratio(cLatency.captured.p50, aLatency.captured.p50),
          p95: ratio(cLatency.captured.p95, aLatency.captured.p95),
          p99: ratio(cLatency.captured.p99, aLatency.captured.p99),
        },
      },
    },
    rpcPerCapture: {
      baselineA: { byMethod: aRpc, total: total(aRpc) },
      baselineB: bRpc,
      authcap: { byMethod: cRpc, total: total(cRpc) },
      authcapIdlePerSecond: idle[0]!.rpcPerSecond,
    },
    temporalPerAuthorization,
    captureProfileMs,
    apiRetries: api.retries,
    concurrency,
    creates,
    createAndSign,
    captureBurst,
    idle,
    exactlyOnce,
    refunds: refundRun.results,
    webhook: webhookRun,
  };
  return { ...results, keys: [], targets: [] };
}

/** `--only holds`: the holds row, with the merchant's webhook endpoint registered as in every row. */
async function holdsOnly(stack: Stack, temporalMetricsUrl: string, receiver: WebhookReceiver): Promise<number> {
  const dev = stack.devJson;
  useTemporalTls(dev.temporalTls);
  const api = new AuthcapApi(dev.apiUrls, dev.apiKey);
  const p = phase('registering the webhook endpoint', 1);
  const webhook = await registerReceiver(api, receiver);
  p.done(`${webhook.endpointId} → ${webhook.url}, every event type`);
  const holds = await runHoldRows(
    {
      dev,
      api,
      chain: createPublicClient({ transport: http(dev.rpcUrl) }),
      sampler: new UsageSampler(stackPids(stack)),
      metricsUrl: `http://127.0.0.1:${process.env.AUTHCAP_WORKER_METRICS_PORT}/metrics`,
      temporalMetricsUrl,
      deliveries: () => receiver.deliveries(),
      payerAt: (i) => dev.payers[i % dev.payers.length]!,
    },
    plan.holds,
  );
  const kind = dev.temporalTopology === 'postgres' ? `${quick ? 'quick' : 'full'}-postgres` : quick ? 'quick' : 'full';
  const written = writeHoldResults(
    {
      startedAt: startedAt.toISOString(),
      durationSeconds: Math.round((performance.now() - started) / 1000),
      command: `npm run bench -- --only holds${quick ? ' --quick' : ''}`,
      machine: machine(),
      configuration: `npm start defaults (Temporal ${dev.temporalTopology}, worker and API ${processCommand('worker/main.ts').built ? 'from the compiled build (dist/)' : 'from source (tsx): the build was stale'}), anvil 0.2 s blocks, 1 confirmation, ${dev.apiUrls.length === 1 ? 'one API process' : `${dev.apiUrls.length} API processes (calls spread over them)`}, one webhook endpoint registered and answering`,
      holds,
    },
    kind,
  );
  process.stderr.write(`bench: wrote ${written.join(', ')}\n\n`);
  process.stdout.write(`${holdsMarkdown(holds)}\n`);
  return holds.audit.ok ? 0 : 1;
}

/** `--only facilitator`: the facilitator row, with the merchant's webhook endpoint registered as in every row. */
async function facilitatorOnly(stack: Stack, receiver: WebhookReceiver): Promise<number> {
  const dev = stack.devJson;
  const loadAtStart = loadavg().map(round2);
  const p = phase('registering the webhook endpoint', 1);
  const webhook = await registerReceiver(new AuthcapApi(dev.apiUrls, dev.apiKey), receiver);
  p.done(`${webhook.endpointId} → ${webhook.url}, every event type`);
  const facilitator = await runFacilitatorRow(stack, receiver, plan.facilitator);
  const kind = dev.temporalTopology === 'postgres' ? `${quick ? 'quick' : 'full'}-postgres` : quick ? 'quick' : 'full';
  const written = writeFacilitatorResults(
    {
      startedAt: startedAt.toISOString(),
      durationSeconds: Math.round((performance.now() - started) / 1000),
      command: `npm run bench -- --only facilitator${quick ? ' --quick' : ''}`,
      machine: machine(),
      configuration: `npm start defaults (Temporal ${dev.temporalTopology}, worker and API ${processCommand('worker/main.ts').built ? 'from the compiled build (dist/)' : 'from source (tsx): the build was stale'}), anvil 0.2 s blocks, 1 confirmation, ${dev.apiUrls.length === 1 ? 'one API process' : `${dev.apiUrls.length} API processes (calls spread over them)`}, one webhook endpoint registered and answering`,
      loadAverage: { start: loadAtStart, end: loadavg().map(round2) },
      facilitator,
    },
    kind,
  );
  process.stderr.write(`bench: wrote ${written.join(', ')}\n\n`);
  process.stdout.write(`${facilitatorMarkdown(facilitator)}\n`);
  return facilitator.audit.ok ? 0 : 1;
}

const round2 = (v: number) => Math.round(v * 100) / 100;

/**
 * CPU is the whole phase's, divided by its lifecycles. Temporal is read from a sample of them after
 * a pause: work the phase set going (the relayer's look at in-flight transactions every 5 s, streams
 * and authorizations closing) lands just after the phase, and the relayer's window takes it in.
 */
async function costPerLifecycle(
  dev: Stack['devJson'],
  usage: UsageByProcess,
  ids: string[],
  window: { startMs: number; endMs: number },
): Promise<ConcurrencyRow['costPerLifecycle']> {
  const cpuMs = Object.fromEntries(Object.entries(usage).map(([name, u]) => [name, round(u.cpuMs / ids.length)]));
  const p = phase("  reading the sampled lifecycles' histories", 1);
  await sleep(6_000);
  const temporal = await temporalPerLifecycle({
    address: dev.temporalAddress,
    namespace: dev.temporalNamespace,
    sampledIds: spread(ids, 30),
    lifecycles: ids.length,
    window: { ...window, endMs: window.endMs + 6_000 },
  }).catch((err: Error) => {
    process.stderr.write(`bench: reading histories failed: ${err.message}\n`);
    return null;
  });
  const cpuMsTotal = round(Object.values(cpuMs).reduce((a, b) => a + b, 0));
  p.done(
    `per lifecycle: ${cpuMsTotal} CPU ms (${Object.entries(cpuMs)
      .map(([k, v]) => `${k} ${v}`)
      .join(
        ', ',
      )})${temporal ? `, ${temporal.total.workflowTasks} workflow tasks, ${temporal.total.historyEvents} events, ${temporal.total.actions} actions` : ''}`,
  );
  return { cpuMs, cpuMsTotal, temporal };
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}

function machine(): BenchResults['machine'] {
  return {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 1e9),
    node: process.version,
    platform: `${platform()} ${release()}`,
  };
}

process.exitCode = await main().catch((err) => {
  console.error('bench failed:', err);
  return 1;
});
process.exit();
