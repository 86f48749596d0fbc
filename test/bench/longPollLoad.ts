// `npx tsx test/bench/longPollLoad.ts`: what open long polls (GET …?wait=30) cost everyone else. One stack
// as `npm start` runs it (the build when fresh, the SQLite file, the API as its own process with the
// caps it reads from AUTHCAP_MAX_WAITS_PER_KEY / AUTHCAP_MAX_WAITS), then whole lifecycles
// (create → sign → capture → captured) of an order service on an idle stack, then the same while
// WAITS long polls stay open on AUTHS drafted authorizations from KEYS read-only operator keys, each
// asked again as soon as it answers (after Retry-After when refused, as a well-behaved client does).
// Prints the lifecycle latency of both phases, the long polls' answers by status and what the
// Temporal server was asked meanwhile; writes test/bench/results/latest-longPoll.json (over the previous run).
// Target: no 503 while Temporal is up, the caps answer 429, lifecycles within 1.5× of idle (p50, p95).
//   WAITS (2000), AUTHS (200), KEYS (4), N (40 lifecycles per phase at least), C (5 at once),
//   LOAD_SECONDS (60: the loaded phase lasts at least this, so every wait times out and is asked again)
import { setMaxListeners } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiKeyStore } from '../../client/apiKeys.js';
import { DEFAULT_WAIT_LIMITS } from '../../api/waitLimits.js';
import { freePort } from '../../devstack/process.js';
import { AuthcapApi, type LifecycleTiming, type Payer } from './authcapFlows.js';
import { stackPids, startBenchStack } from './benchStack.js';
import { UsageSampler, type UsageByProcess } from './processUsage.js';
import { distribution, pool, ratio, type Distribution } from './stats.js';
import { scrapeServerCounters } from './temporalServerCalls.js';

const settings = {
  waits: Number(process.env.WAITS ?? 2_000),
  authorizations: Number(process.env.AUTHS ?? 200),
  keys: Number(process.env.KEYS ?? 4),
  lifecycles: Number(process.env.N ?? 40),
  concurrency: Number(process.env.C ?? 5),
  loadSeconds: Number(process.env.LOAD_SECONDS ?? 60),
  maxWaitsPerKey: Number(process.env.AUTHCAP_MAX_WAITS_PER_KEY || DEFAULT_WAIT_LIMITS.perKey),
  maxWaits: Number(process.env.AUTHCAP_MAX_WAITS || DEFAULT_WAIT_LIMITS.perProcess),
};

interface Phase {
  lifecycles: number;
  lifecycle: Distribution;
  /** Plain GETs of the same order service (no wait). */
  get: Distribution;
  /** Answers of 503/429 its requests waited out and retried. */
  retries: number;
  /** Lifecycles that did not finish (an answer other than the one expected, even after retries, or none). */
  failed: number;
  /** The first few reasons, for the report. */
  failures: string[];
  seconds: number;
  usage: UsageByProcess;
  /** Requests the Temporal server's frontend got, per second, by operation (top ones). */
  temporalPerSecond: Record<string, number>;
}

/** The long polls of the loaded phase: answers by status, and how many were open at once. */
class LongPollLoad {
  readonly answers: Record<string, number> = {};
  private inFlight = 0;
  private readonly openSamples: number[] = [];
  private readonly stop = new AbortController();
  private sampler: NodeJS.Timeout | undefined;
  private lanes: Promise<void>[] = [];

  constructor(
    private readonly apiUrl: string,
    private readonly keys: string[],
    private readonly ids: string[],
  ) {}

  start(count: number): void {
    // Every lane's request and sleep listens on the one stop signal: thousands at once, by design.
    setMaxListeners(count * 3, this.stop.signal);
    this.lanes = Array.from({ length: count }, (_, i) => this.lane(this.keys[i % this.keys.length]!, this.ids[i % this.ids.length]!));
    // A refused wait answers at once: what is in flight a moment later is what the API holds open.
    this.sampler = setInterval(() => this.openSamples.push(this.inFlight), 1_000);
  }

  async end(): Promise<void> {
    clearInterval(this.sampler);
    this.stop.abort();
    await Promise.allSettled(this.lanes);
  }

  get open(): { max: number; mean: number } {
    const samples = this.openSamples.slice(3);
    return { max: Math.max(0, ...samples), mean: Math.round(samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length)) };
  }

  /** One caller that keeps a long poll open on `id` for as long as the phase lasts. */
  private async lane(key: string, id: string): Promise<void> {
    while (!this.stop.signal.aborted) {
      let status = 'error';
      let retryAfterMs = 1_000;
      this.inFlight += 1;
      try {
        const res = await fetch(`${this.apiUrl}/v1/authorizations/${id}?wait=30`, {
          headers: { authorization: `Bearer ${key}` },
          signal: this.stop.signal,
        });
        await res.arrayBuffer();
        status = String(res.status);
        retryAfterMs = Number(res.headers.get('retry-after') ?? 1) * 1000;
      } catch {
        if (this.stop.signal.aborted) return;
      } finally {
        this.inFlight -= 1;
      }
      this.answers[status] = (this.answers[status] ?? 0) + 1;
      if (status !== '200') await sleep(retryAfterMs, this.stop.signal);
    }
  }
}

/** Sleeps `ms`, or less when `signal` aborts; its listener goes with it (lanes sleep thousands of times). */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/** At least `count` lifecycles at `concurrency`, and on until `minSeconds` have passed; failures are counted, not fatal. */
async function lifecycles(
  api: AuthcapApi,
  payer: (i: number) => Payer,
  label: string,
  count: number,
  concurrency: number,
  minSeconds = 0,
): Promise<{ rows: LifecycleTiming[]; failures: string[] }> {
  const started = performance.now();
  const rows: LifecycleTiming[] = [];
  const failures: string[] = [];
  let next = 0;
  const more = () => next < count || performance.now() - started < minSeconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (more()) {
        try {
          const row = await api.lifecycle(payer(next++), label);
          rows.push(row);
          // The order service reads its authorization as a checkout page would.
          await api.call('GET', `/v1/authorizations/${row.id}`);
        } catch (err) {
          failures.push(String((err as Error).message ?? err).slice(0, 200));
        }
      }
    }),
  );
  return { rows, failures };
}

async function measure(
  label: string,
  api: AuthcapApi,
  payer: (i: number) => Payer,
  sampler: UsageSampler,
  metricsUrl: string,
  namespace: string,
  minSeconds: number,
): Promise<Phase> {
  api.getLatencies.length = 0;
  api.retries = 0;
  const before = await scrapeServerCounters(metricsUrl, namespace);
  sampler.start();
  const started = performance.now();
  const { rows, failures } = await lifecycles(api, payer, label, settings.lifecycles, settings.concurrency, minSeconds);
  const seconds = (performance.now() - started) / 1000;
  const usage = await sampler.stop();
  const after = await scrapeServerCounters(metricsUrl, namespace);
  const temporalPerSecond: Record<string, number> = {};
  for (const [key, value] of after) {
    const [metric, operation] = key.split('|') as [string, string];
    const delta = value - (before.get(key) ?? 0);
    if (metric === 'service_requests' && delta > 0) temporalPerSecond[operation] = Math.round((delta / seconds) * 10) / 10;
  }
  const top = Object.fromEntries(
    Object.entries(temporalPerSecond)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8),
  );
  return {
    lifecycles: rows.length,
    lifecycle: distribution(rows.map((r) => r.lifecycleMs)),
    get: distribution(api.getLatencies),
    retries: api.retries,
    failed: failures.length,
    failures: failures.slice(0, 5),
    seconds: Math.round(seconds),
    usage,
    temporalPerSecond: top,
  };
}

const startedAt = new Date().toISOString();
process.env.AUTHCAP_WORKER_METRICS_PORT = String(await freePort());
const metricsPort = await freePort();
const stateDir = mkdtempSync(join(tmpdir(), 'authcap-longpoll-'));
const stack = await startBenchStack(stateDir, { temporalMetricsPort: metricsPort });
try {
  const dev = stack.devJson;
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const api = new AuthcapApi(dev.apiUrl, dev.apiKey);
  const payer = (i: number) => dev.payers[i % dev.payers.length]!;
  // The long polls come from read-only operator keys of their own: reading is all it takes to hold one.
  const store = ApiKeyStore.open(join(stateDir, 'api-keys.json'));
  const pollKeys = Array.from({ length: settings.keys }, (_, i) => store.create('operator', `long poll ${i + 1}`).key);
  const sampler = new UsageSampler(stackPids(stack));

  console.log('warming up…');
  await pool(
    Array.from({ length: 10 }, (_, i) => i),
    5,
    (i) => api.lifecycle(payer(i), 'warm-up'),
  );
  console.log(`idle: ${settings.lifecycles} lifecycles at concurrency ${settings.concurrency}…`);
  const idle = await measure('idle', api, payer, sampler, metricsUrl, dev.temporalNamespace, 0);

  console.log(`drafting ${settings.authorizations} authorizations to wait on…`);
  const watched = await pool(
    Array.from({ length: settings.authorizations }, (_, i) => i),
    10,
    async (i) => (await api.create(payer(i), 'watched')).id,
  );

  console.log(`loaded: ${settings.waits} long polls from ${settings.keys} keys, lifecycles for ${settings.loadSeconds} s…`);
  const polls = new LongPollLoad(dev.apiUrl, pollKeys, watched);
  polls.start(settings.waits);
  // Every long poll asked (and the refused ones told when to come back) before the lifecycles start.
  await sleep(5_000);
  const loaded = await measure('loaded', api, payer, sampler, metricsUrl, dev.temporalNamespace, settings.loadSeconds);
  await polls.end();

  const within = (phase: 'p50' | 'p95') => ratio(loaded.lifecycle[phase], idle.lifecycle[phase]);
  const results = {
    version: 1,
    bench: 'longPollLoad',
    startedAt,
    command: 'npx tsx test/bench/longPollLoad.ts',
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
    settings,
    idle,
    loaded,
    longPolls: { answers: polls.answers, open: polls.open },
    ratios: { lifecycleP50: within('p50'), lifecycleP95: within('p95') },
    targets: {
      no503: (polls.answers['503'] ?? 0) === 0,
      capAnswers429: (polls.answers['429'] ?? 0) > 0 || settings.waits <= Math.min(settings.maxWaits, settings.maxWaitsPerKey * settings.keys),
      lifecyclesWithin1_5x: loaded.failed === 0 && (within('p50') ?? Infinity) <= 1.5 && (within('p95') ?? Infinity) <= 1.5,
    },
  };
  const row = (name: string, p: Phase) =>
    `| ${name} | ${p.lifecycles} | ${p.failed} | ${p.lifecycle.p50} | ${p.lifecycle.p95} | ${p.get.p50} | ${p.get.p95} | ${p.retries} | ${p.usage.api?.cpuPercent ?? '–'} | ${p.usage.temporal?.cpuPercent ?? '–'} |`;
  console.log(
    [
      '',
      `Long polls: ${settings.waits} on ${settings.authorizations} authorizations from ${settings.keys} operator keys; caps ${settings.maxWaitsPerKey} per key, ${settings.maxWaits} per process`,
      '',
      '| phase | lifecycles | failed | create→captured p50 ms | p95 ms | GET p50 ms | GET p95 ms | retried 429/503 | API CPU % | Temporal CPU % |',
      '|---|---|---|---|---|---|---|---|---|---|',
      row('idle', idle),
      row(`${settings.waits} long polls asked`, loaded),
      '',
      `loaded ÷ idle: p50 ${results.ratios.lifecycleP50}×, p95 ${results.ratios.lifecycleP95}×`,
      `long poll answers by status: ${JSON.stringify(polls.answers)}; open at once: max ${polls.open.max}, mean ${polls.open.mean}`,
      `Temporal frontend requests/s, idle: ${JSON.stringify(idle.temporalPerSecond)}`,
      `Temporal frontend requests/s, loaded: ${JSON.stringify(loaded.temporalPerSecond)}`,
      ...(loaded.failures.length ? [`lifecycles that failed under load, first ones: ${JSON.stringify(loaded.failures)}`] : []),
      `targets: ${JSON.stringify(results.targets)}`,
    ].join('\n'),
  );
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'latest-longPoll.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log('wrote test/bench/results/latest-longPoll.json');
} finally {
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
