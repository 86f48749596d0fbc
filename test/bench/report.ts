// A run's figures as JSON, a Markdown table (docs/benchmarks.md quotes it) and an SVG chart of latency and
// throughput against concurrency (vega-lite, rendered headless to SVG), under test/bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { markdownTable } from 'markdown-table';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import type { BenchResults, Target } from './results.js';
import { ACTION_RULES, type TemporalFigures } from './lifecycleCost.js';
import { whereItGoesMarkdown } from './whereItGoes.js';
import { refundAuditLine, refundsMarkdown } from './refundReport.js';
import { costTargetsMarkdown } from './costTargets.js';
import { holdsMarkdown } from './holdReport.js';
import { facilitatorMarkdown } from './facilitatorReport.js';

// BENCH_OUT_DIR: elsewhere than the committed results (a trial run).
const dir = process.env.BENCH_OUT_DIR ? `${process.env.BENCH_OUT_DIR.replace(/\/+$/, '')}/` : fileURLToPath(new URL('./results/', import.meta.url));

/** The service targets (latency against the floor, rates, idle cost, scale), each judged against this run's own figures. */
export function targetsOf(r: Omit<BenchResults, 'targets'>): Target[] {
  const b = 'settled' in r.latency.baselineB ? r.rpcPerCapture.baselineB?.total : undefined;
  const top = r.concurrency.at(-1);
  const idle = r.idle.at(-1)!;
  const idleCpu = (idle.usage.worker?.cpuPercent ?? 0) + (idle.usage.temporal?.cpuPercent ?? 0);
  const t = (name: string, target: string, got: string, met: boolean): Target => ({ name, target, got, met });
  return [
    t(
      'capture p50 vs floor',
      '≤ 1.3× A',
      `${r.latency.ratioToA.captured.p50}× (${r.latency.authcap.captured.p50} vs ${r.latency.baselineA.captured.p50} ms)`,
      (r.latency.ratioToA.captured.p50 ?? Infinity) <= 1.3,
    ),
    t(
      'capture p95 vs floor',
      '≤ 1.5× A',
      `${r.latency.ratioToA.captured.p95}× (${r.latency.authcap.captured.p95} vs ${r.latency.baselineA.captured.p95} ms)`,
      (r.latency.ratioToA.captured.p95 ?? Infinity) <= 1.5,
    ),
    t(
      'node calls per capture',
      `≤ 5 and ≤ B (${b ?? 'n/a'})`,
      String(r.rpcPerCapture.authcap.total),
      r.rpcPerCapture.authcap.total <= 5 && (b === undefined || r.rpcPerCapture.authcap.total <= b),
    ),
    t(
      'creates at concurrency 50',
      '≥ 50/s, p95 < 1 s',
      `${r.creates.perSecond}/s, p95 ${r.creates.latency.p95} ms`,
      r.creates.perSecond >= 50 && r.creates.latency.p95 < 1_000,
    ),
    t(
      'create + sign at concurrency 50',
      '≥ 30/s, p95 < 1 s',
      `${r.createAndSign.perSecond}/s, p95 ${r.createAndSign.latency.p95} ms`,
      r.createAndSign.perSecond >= 30 && r.createAndSign.latency.p95 < 1_000,
    ),
    t(
      `captures with ${r.captureBurst.callers} callers waiting with GET ?wait`,
      '≥ 40/s',
      `${r.captureBurst.capturesPerSecond}/s`,
      r.captureBurst.capturesPerSecond >= 40,
    ),
    // Waiting callers make no plain GETs when every capture answers within the POST: nothing to report then.
    t(
      'GET p95 under that load',
      '≤ 50 ms',
      Number.isFinite(r.captureBurst.get.p95) ? `${r.captureBurst.get.p95} ms` : 'no plain GETs',
      !Number.isFinite(r.captureBurst.get.p95) || r.captureBurst.get.p95 <= 50,
    ),
    t(`idle with ${idle.open} open: worker RSS`, '< 300 MB', `${idle.usage.worker?.rssMb} MB`, (idle.usage.worker?.rssMb ?? Infinity) < 300),
    t(`idle with ${idle.open} open: worker + Temporal CPU`, '< 10 % of a core', `${Math.round(idleCpu * 10) / 10} %`, idleCpu < 10),
    t(
      `idle with ${idle.open} open: node calls/s`,
      'as with none open',
      `${idle.rpcPerSecond.total}/s (none open: ${r.idle[0]!.rpcPerSecond.total}/s)`,
      idle.rpcPerSecond.total <= r.idle[0]!.rpcPerSecond.total * 1.5 + 1,
    ),
    ...(r.keys.length === 2
      ? [
          t(
            'captures/s, 4 keys vs 1',
            'grows with keys',
            `${r.keys[1]!.capturesPerSecond}/s vs ${r.keys[0]!.capturesPerSecond}/s (${ratioOf(r.keys[1]!.capturesPerSecond, r.keys[0]!.capturesPerSecond)}×)`,
            r.keys[1]!.capturesPerSecond > r.keys[0]!.capturesPerSecond,
          ),
        ]
      : []),
    ...(r.networks
      ? [
          t(
            'lifecycles/s at concurrency 50, two networks vs one',
            'within 10 %',
            `${r.networks.twoNetworks.lifecyclesPerSecond}/s vs ${r.networks.oneNetwork.lifecyclesPerSecond}/s (${r.networks.ratio}×)`,
            r.networks.ratio >= 0.9,
          ),
        ]
      : []),
    ...(r.watching && r.watching.runs.length === 2
      ? [
          t(
            'node calls per block for watching, 2 workers vs 1',
            'no more',
            `${r.watching.runs[1]!.getLogsPerBlock} vs ${r.watching.runs[0]!.getLogsPerBlock} eth_getLogs per block`,
            r.watching.runs[1]!.getLogsPerBlock <= r.watching.runs[0]!.getLogsPerBlock * 1.1 + 0.01,
          ),
        ]
      : []),
    ...(r.facilitator?.targets ?? []),
    ...(top
      ? [t(`lifecycles at concurrency ${top.concurrency}`, 'reported', `${top.authcap.lifecyclesPerSecond}/s (A ${top.baselineA.capturesPerSecond}/s)`, true)]
      : []),
  ];
}

function ratioOf(a: number, b: number): number {
  return Math.round((a / b) * 100) / 100;
}

export function markdownOf(r: BenchResults): string {
  const d = (x: { p50: number; p95: number; p99: number }) => `${x.p50} / ${x.p95} / ${x.p99}`;
  const b = 'settled' in r.latency.baselineB ? r.latency.baselineB.settled : undefined;
  const lines = [
    `Run ${r.startedAt} (\`${r.command}\`, ${r.mode}, ${r.durationSeconds} s) on ${r.machine.cpus} × ${r.machine.model}, ${r.machine.memoryGb} GB, Node ${r.machine.node}.`,
    `Configuration: ${r.configuration}.`,
    '',
    '**One capture at a time** (ms, p50 / p95 / p99; ratio to baseline A from the same run)',
    '',
    markdownTable([
      ['', 'request → preconfirmed', 'request → captured', 'node calls per capture'],
      ['A: bare viem script', d(r.latency.baselineA.preconfirmed), d(r.latency.baselineA.captured), String(r.rpcPerCapture.baselineA.total)],
      [
        'B: x402 facilitator (verify + settle)',
        '—',
        b ? d(b) : `failed: ${(r.latency.baselineB as { error: string }).error}`,
        String(r.rpcPerCapture.baselineB?.total ?? '—'),
      ],
      ['authcap (POST capture, API + Temporal)', d(r.latency.authcap.preconfirmed), d(r.latency.authcap.captured), String(r.rpcPerCapture.authcap.total)],
      [
        'authcap ÷ A',
        `${r.latency.ratioToA.preconfirmed.p50}× / ${r.latency.ratioToA.preconfirmed.p95}× / ${r.latency.ratioToA.preconfirmed.p99}×`,
        `${r.latency.ratioToA.captured.p50}× / ${r.latency.ratioToA.captured.p95}× / ${r.latency.ratioToA.captured.p99}×`,
        String(round(r.rpcPerCapture.authcap.total / r.rpcPerCapture.baselineA.total)),
      ],
    ]),
    '',
    `authcap's node calls per capture by method: ${Object.entries(r.rpcPerCapture.authcap.byMethod)
      .map(([m, n]) => `${m} ${n}`)
      .join(', ')} (the worker's idle background alone: ${r.rpcPerCapture.authcapIdlePerSecond.total}/s).`,
    `Temporal per authorization (create → captured, authorization workflow only): ${r.temporalPerAuthorization.workflowTasks} workflow tasks, ${r.temporalPerAuthorization.activities} activities, ${r.temporalPerAuthorization.updates} updates, ${r.temporalPerAuthorization.signals} signals, ${r.temporalPerAuthorization.historyEvents} history events.`,
    `Where a capture's time goes (ms, mean, from the workflow's history): ${Object.entries(r.captureProfileMs)
      .map(([k, v]) => `${k} ${v}`)
      .join('; ')}.`,
    '',
    `**Against concurrency** (authcap: whole lifecycles through the API, callers waiting with GET ?wait=30 after a 202, as docs/accepting-payments.md recommends${
      r.webhook
        ? `; one webhook endpoint registered and answering, deliveries received per row: ${r.concurrency.map((c) => c.webhookDeliveries ?? '—').join(' / ')}`
        : ''
    })`,
    '',
    markdownTable([
      [
        'concurrency',
        'n',
        'A captures/s',
        'authcap lifecycles/s',
        'ratio',
        'authcap capture p50 / p95 ms',
        'A capture p50 / p95 ms',
        'GET p95 ms',
        'CPU % worker / API / Temporal / anvil',
      ],
      ...r.concurrency.map((c) => [
        String(c.concurrency),
        String(c.authorizations),
        String(c.baselineA.capturesPerSecond),
        String(c.authcap.lifecyclesPerSecond),
        `${c.authcap.ratioToA.throughput}×`,
        `${c.authcap.capturedFromRequest.p50} / ${c.authcap.capturedFromRequest.p95}`,
        `${c.baselineA.captured.p50} / ${c.baselineA.captured.p95}`,
        Number.isFinite(c.authcap.get.p95) ? String(c.authcap.get.p95) : '—',
        ['worker', 'api', 'temporal', 'anvil'].map((p) => c.usage[p]?.cpuPercent ?? '—').join(' / '),
      ]),
    ]),
    '',
    costMarkdown(r),
    whereItGoesMarkdown(r),
    r.refunds ? refundsMarkdown(r.refunds) : '',
    r.holds ? holdsMarkdown(r.holds) : '',
    r.facilitator ? facilitatorMarkdown(r.facilitator) : '',
    '**Service targets**',
    '',
    markdownTable([['target', 'wanted', 'got', 'met'], ...r.targets.map((t) => [t.name, t.target, t.got, t.met ? 'yes' : '**no**'])]),
    '',
    costTargetsMarkdown(r),
    '**Merchant keys** (the same burst of stored authorizations, 100 callers waiting with GET ?wait, on a fresh stack)',
    '',
    markdownTable([
      ['keys', 'captures', 'captures/s', 'capture p50 / p95 ms', 'captures per key', 'exactly-once'],
      ...r.keys.map((k) => [
        String(k.keys),
        String(k.n),
        String(k.capturesPerSecond),
        `${k.captured.p50} / ${k.captured.p95}`,
        Object.values(k.perKey).join(' / '),
        k.exactlyOnceOk ? 'ok' : '**FAILED**',
      ]),
    ]),
    '',
    ...(r.networks
      ? [
          '**Networks** (concurrency 50 on one stack serving two dev chains: on one of them, then spread over both)',
          '',
          markdownTable([
            ['networks', 'lifecycles', 'lifecycles/s', 'capture p50 / p95 ms', 'per network'],
            ...[r.networks.oneNetwork, r.networks.twoNetworks].map((run) => [
              String(run.networks),
              String(run.n),
              String(run.lifecyclesPerSecond),
              `${run.captured.p50} / ${run.captured.p95}`,
              Object.values(run.perNetwork).join(' / '),
            ]),
          ]),
          '',
        ]
      : []),
    ...(r.watching
      ? [
          "**Watching** (the stack idle, no authorization open: every worker's node calls per block mined)",
          '',
          markdownTable([
            ['workers', 'blocks', 'eth_getLogs / block', 'all calls / block', 'by method'],
            ...r.watching.runs.map((run) => [
              String(run.workers),
              String(run.blocks),
              String(run.getLogsPerBlock),
              String(run.totalPerBlock),
              Object.entries(run.perBlock)
                .map(([m, n]) => `${m} ${n}`)
                .join(', '),
            ]),
          ]),
          '',
        ]
      : []),
    '**Idle** (open authorizations waiting; CPU % of one core, RSS MB)',
    '',
    markdownTable([
      ['open', 'node calls/s', 'worker', 'API', 'Temporal', 'anvil'],
      ...r.idle.map((i) => [
        String(i.open),
        String(i.rpcPerSecond.total),
        ...['worker', 'api', 'temporal', 'anvil'].map((p) => (i.usage[p] ? `${i.usage[p]!.cpuPercent} % / ${i.usage[p]!.rssMb} MB` : '—')),
      ]),
    ]),
    '',
    `Overload answers (503/429) the callers waited out and retried, as clients do: ${r.apiRetries ?? 0}.`,
    '',
    `Exactly-once audit: ${r.exactlyOnce.ok ? 'passed' : '**FAILED**'}: ${r.exactlyOnce.authcapCaptures} authcap captures${r.exactlyOnce.refunds ? ` and ${r.exactlyOnce.refunds.refunds} refunds` : ''}, ${r.exactlyOnce.merchantTransactions} merchant transactions, ${r.exactlyOnce.duplicateNonces} nonces used twice, ${r.exactlyOnce.authcapCapturesWithoutLog} captures without a log.${refundAuditLine(r.exactlyOnce.refunds)}`,
  ];
  return `${lines.join('\n')}\n`;
}

const PROCESSES = ['worker', 'api', 'temporal', 'anvil'] as const;
const WORKFLOW_NAMES: Record<string, string> = {
  authorizationWorkflow: 'authorization',
  nonceClaimWorkflow: 'nonce claim',
  merchantRelayerWorkflow: 'relayer (share)',
  webhookDispatchWorkflow: 'webhook dispatcher (share)',
};

/** The cost-per-lifecycle tables: by concurrency, then by workflow for the row at 50. */
export function costMarkdown(r: Pick<BenchResults, 'concurrency'>): string {
  const rows = r.concurrency.filter((c) => c.costPerLifecycle);
  if (rows.length === 0) return '';
  const t = (f: TemporalFigures | undefined) =>
    f
      ? [f.workflowTasks, f.activityTasks, f.localActivities, f.historyEvents, round(f.historyBytes / 1024), f.actions].map(String)
      : ['—', '—', '—', '—', '—', '—'];
  const head = ['workflow tasks', 'activity tasks', 'local activities', 'history events', 'history KB', 'actions'];
  const focus = rows.find((c) => c.concurrency === 50) ?? rows.at(-1)!;
  const temporal = focus.costPerLifecycle!.temporal;
  const lines = [
    "**Cost per lifecycle** (create → sign → store → capture → captured through the API. CPU: each process's CPU time over the whole phase ÷ lifecycles, from /proc, the bench itself not counted. Temporal: every workflow a lifecycle causes (its authorization workflow, every run, and every workflow it starts: a pre-signed one's nonce claim) read from the histories of up to 30 sampled lifecycles, plus its share of the merchant relayer and of the webhook dispatcher when an endpoint is registered: their events in the phase ÷ lifecycles)",
    '',
    markdownTable([
      ['concurrency', 'n', 'sampled', 'CPU ms worker / API / Temporal / anvil', 'CPU ms total', ...head],
      ...rows.map((c) => {
        const k = c.costPerLifecycle!;
        return [
          String(c.concurrency),
          String(c.authorizations),
          String(k.temporal?.sampled ?? 0),
          PROCESSES.map((p) => k.cpuMs[p] ?? '—').join(' / '),
          String(k.cpuMsTotal),
          ...t(k.temporal?.total),
        ];
      }),
    ]),
    '',
  ];
  if (temporal) {
    lines.push(
      `At concurrency ${focus.concurrency}, by workflow (per lifecycle; memo upserts are not an action in Temporal Cloud's list):`,
      '',
      markdownTable([
        ['workflow', ...head, 'memo upserts'],
        ...Object.entries(temporal.byWorkflow).map(([type, f]) => [WORKFLOW_NAMES[type] ?? type, ...t(f), String(f.memoUpserts)]),
        ['total', ...t(temporal.total), String(temporal.total.memoUpserts)],
      ]),
      '',
      `Actions per lifecycle at concurrency ${focus.concurrency} by kind: ${Object.entries(temporal.total.actionsByKind)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}.`,
      `Counted as actions (Temporal Cloud, docs.temporal.io/cloud/actions; queries, activity heartbeats and rejected updates leave no history and are not counted): ${Object.entries(
        ACTION_RULES,
      )
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ')}.`,
      '',
    );
  }
  return lines.join('\n');
}

export async function chartOf(r: BenchResults): Promise<string> {
  const rows = r.concurrency.flatMap((c) => [
    {
      concurrency: c.concurrency,
      who: 'A: bare script',
      throughput: c.baselineA.capturesPerSecond,
      p50: c.baselineA.captured.p50,
      p95: c.baselineA.captured.p95,
    },
    {
      concurrency: c.concurrency,
      who: 'authcap lifecycle',
      throughput: c.authcap.lifecyclesPerSecond,
      p50: c.authcap.capturedFromRequest.p50,
      p95: c.authcap.capturedFromRequest.p95,
    },
  ]);
  const cpuRows = r.concurrency.flatMap((c) =>
    PROCESSES.map((process, order) => ({ concurrency: c.concurrency, process, order, cpuMs: c.costPerLifecycle?.cpuMs[process] ?? 0 })),
  );
  const x = { field: 'concurrency', type: 'quantitative', scale: { type: 'log' }, title: 'concurrent callers' } as const;
  const color = { field: 'who', type: 'nominal', title: null } as const;
  const spec = vegaLite.compile({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: `authcap vs the floor (${r.mode} run, ${r.startedAt.slice(0, 10)})`,
    data: { values: rows },
    hconcat: [
      {
        width: 300,
        height: 220,
        title: 'request → captured, p50 (solid) and p95 (dashed), ms',
        layer: [
          { mark: { type: 'line', point: true }, encoding: { x, y: { field: 'p50', type: 'quantitative', title: 'ms' }, color } },
          { mark: { type: 'line', strokeDash: [4, 3] }, encoding: { x, y: { field: 'p95', type: 'quantitative' }, color } },
        ],
      },
      {
        width: 300,
        height: 220,
        title: 'throughput, per second',
        mark: { type: 'line', point: true },
        encoding: { x, y: { field: 'throughput', type: 'quantitative', title: 'per second' }, color },
      },
      {
        width: 220,
        height: 220,
        title: 'CPU ms per lifecycle, by process',
        data: { values: cpuRows },
        mark: 'bar',
        encoding: {
          x: { field: 'concurrency', type: 'ordinal', title: 'concurrent callers' },
          y: { field: 'cpuMs', type: 'quantitative', title: 'CPU ms' },
          color: { field: 'process', type: 'nominal', title: null, sort: [...PROCESSES] },
          order: { field: 'order' },
        },
      },
    ],
    resolve: { scale: { color: 'independent' }, legend: { color: 'independent' } },
  } as never).spec;
  return new vega.View(vega.parse(spec), { renderer: 'none' }).toSVG();
}

export async function writeResults(r: BenchResults): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  // Runs on the production shape are kept beside the dev server's, not over them. Only the latest run
  // of each kind is kept: earlier figures live in git history (docs/benchmarks.md).
  const kind = r.temporalTopology === 'postgres' ? `${r.mode}-postgres` : r.mode;
  const files: [string, string][] = [
    [`latest-${kind}.json`, `${JSON.stringify(r, null, 2)}\n`],
    [`latest-${kind}.md`, markdownOf(r)],
    [`latest-${kind}.svg`, await chartOf(r)],
  ];
  for (const [name, text] of files) writeFileSync(`${dir}${name}`, text);
  return files.map(([name]) => (process.env.BENCH_OUT_DIR ? `${dir}${name}` : `test/bench/results/${name}`));
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}
