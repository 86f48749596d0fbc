// The cost targets, each judged against this run's own figures: what one lifecycle costs at the top
// concurrency row (over every workflow it causes, events and webhook deliveries included), how fast the
// stack goes, and what one refund costs at concurrency 10. Printed by the bench and written into its
// Markdown report (test/bench/report.ts has the service targets: latency against the floor, rates, idle, scale).
import { markdownTable } from 'markdown-table';
import type { BenchResults, CostTarget } from './results.js';

const round = (v: number) => Math.round(v * 10) / 10;
const has = (v: number | undefined | null): v is number => typeof v === 'number' && Number.isFinite(v);

export function costTargetsOf(r: Omit<BenchResults, 'targets' | 'costTargets'>): CostTarget[] {
  const t = (figure: string, got: string, target: string, met: boolean | null): CostTarget => ({ figure, got, target, met });
  const atMost = (figure: string, v: number | undefined | null, max: number, unit = '') =>
    t(figure, has(v) ? `${v}${unit}` : 'not measured', `≤ ${max}${unit}`, has(v) ? v <= max : false);
  const top = r.concurrency.at(-1);
  const at = top ? ` (concurrency ${top.concurrency})` : '';
  const temporal = top?.costPerLifecycle?.temporal?.total;
  const cpu = top?.costPerLifecycle?.cpuMs;
  const cpuOf = (names: string[]) => (cpu ? round(names.reduce((sum, n) => sum + (cpu[n] ?? 0), 0)) : undefined);
  const writes = top?.serverCalls?.writes;
  const updates = writes?.UpdateWorkflowExecution ?? top?.serverCalls?.persistence.UpdateWorkflowExecution;
  const creates = writes?.CreateWorkflowExecution ?? top?.serverCalls?.persistence.CreateWorkflowExecution;
  const idle = r.idle.at(-1);
  const rss = idle?.usage.worker?.rssMb;
  const refund = r.refunds?.rows.find((row) => row.concurrency === 10) ?? r.refunds?.rows.at(-1);
  const refundTasks = refund?.cost.temporal?.total.workflowTasks;
  const refundCpu = refund ? round(['worker', 'api', 'temporal'].reduce((sum, n) => sum + (refund.cost.cpuMs[n] ?? 0), 0)) : undefined;
  const floorRatio = r.latency.ratioToA.captured.p50;
  const postgres = r.temporalTopology === 'postgres';
  const floor = r.floor;
  const floorRate = top && floor ? Math.round((100 * top.authcap.lifecyclesPerSecond) / floor.lifecycles_per_s) / 100 : undefined;
  return [
    t(
      `lifecycles/s ÷ Temporal's floor's, same sitting${at}`,
      has(floorRate) ? `${floorRate}× (${top!.authcap.lifecyclesPerSecond} vs ${floor!.lifecycles_per_s}/s)` : 'run with --floor <temporal-floor/run.mjs>',
      '≥ 0.7×',
      has(floorRate) ? floorRate >= 0.7 : null,
    ),
    atMost(`workflow tasks per lifecycle, over every workflow it causes (events included)${at}`, temporal?.workflowTasks, 4),
    atMost(`history events per lifecycle${at}`, temporal?.historyEvents, 40),
    atMost(`Temporal Cloud actions per lifecycle${at}`, temporal?.actions, 15),
    t(
      `persistence writes per lifecycle (UpdateWorkflowExecution, from the server's metrics)${at}`,
      has(updates) ? `${updates}${has(creates) ? ` (and ${creates} CreateWorkflowExecution)` : ''}` : 'not measured',
      '≤ 15',
      has(updates) ? updates <= 15 : false,
    ),
    t(
      `CPU ms per lifecycle, worker + API + Temporal${at}`,
      has(cpuOf(['worker', 'api', 'temporal']))
        ? `${cpuOf(['worker', 'api', 'temporal'])}${floor ? ` (the floor: ${floor.total_cpu_ms_per_lc})` : ''}`
        : 'not measured',
      '≤ 55',
      has(cpuOf(['worker', 'api', 'temporal'])) ? cpuOf(['worker', 'api', 'temporal'])! <= 55 : false,
    ),
    atMost(`CPU ms per lifecycle, worker + API alone${at}`, cpuOf(['worker', 'api']), 25),
    t(`whole lifecycles/s${at}`, top ? `${top.authcap.lifecyclesPerSecond}/s` : 'not measured', '≥ 20/s', top ? top.authcap.lifecyclesPerSecond >= 20 : false),
    t(
      `capture p95, POST capture → captured${at}`,
      top ? `${top.authcap.capturedFromRequest.p95} ms` : 'not measured',
      '≤ 1.5 s',
      top ? top.authcap.capturedFromRequest.p95 <= 1_500 : false,
    ),
    t(
      'one capture at a time, POST sent → captured answer, ÷ a bare viem capture (p50)',
      `${floorRatio ?? '—'}× (${r.latency.authcap.captured.p50} vs ${r.latency.baselineA.captured.p50} ms)`,
      '≤ 1.05×',
      has(floorRatio) ? floorRatio <= 1.05 : false,
    ),
    t(
      `creates/s at concurrency ${r.creates.concurrency} (p95)`,
      `${r.creates.perSecond}/s (p95 ${r.creates.latency.p95} ms)`,
      '≥ 60/s (p95 ≤ 1 s)',
      r.creates.perSecond >= 60 && r.creates.latency.p95 <= 1_000,
    ),
    postgres
      ? t(
          `lifecycles/s on the production shape${at}`,
          top ? `${top.authcap.lifecyclesPerSecond}/s` : 'not measured',
          '≥ 15/s',
          top ? top.authcap.lifecyclesPerSecond >= 15 : false,
        )
      : t('lifecycles/s on the production shape', 'run with AUTHCAP_TEMPORAL=postgres', '≥ 15/s', null),
    t(`worker RSS with ${idle?.open.toLocaleString('en-US') ?? '—'} open`, has(rss) ? `${rss} MB` : 'not measured', '< 300 MB', has(rss) ? rss < 300 : false),
    t(
      `per refund${refund ? ` (concurrency ${refund.concurrency})` : ''}: workflow tasks / CPU ms, worker + API + Temporal`,
      refund ? `${has(refundTasks) ? refundTasks : 'not read'} / ${refundCpu}` : 'not measured',
      '≤ 4 / ≤ 50',
      refund && has(refundTasks) && has(refundCpu) ? refundTasks <= 4 && refundCpu <= 50 : false,
    ),
  ];
}

export function costTargetsMarkdown(r: Pick<BenchResults, 'costTargets' | 'webhook'>): string {
  if (!r.costTargets?.length) return '';
  const w = r.webhook;
  return [
    `**Cost targets** (the top concurrency row's cost per lifecycle, every workflow it causes included: its authorization workflow, any workflow it starts, and its shares of the merchant relayer and the webhook dispatcher${
      w ? `; one webhook endpoint registered and answering, ${w.deliveries} deliveries of ${w.distinctEventIds} distinct events received` : ''
    })`,
    '',
    markdownTable([
      ['figure', 'got', 'target', 'met'],
      ...r.costTargets.map((x) => [x.figure, x.got, x.target, x.met === null ? '—' : x.met ? 'yes' : '**no**']),
    ]),
    '',
  ].join('\n');
}
