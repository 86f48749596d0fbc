// The holds row's part of a report (test/bench/holdRow.ts): each step and the whole against the floor of
// bare escrow calls, gas per step beside a plain capture's, and what a held payment costs beside a plain
// one on the same stack, in all and step by step.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markdownTable } from 'markdown-table';
import type { TemporalFigures } from './lifecycleCost.js';
import type { GasFigures, HoldResults, LifecycleCost } from './results.js';

const d = (x: { p50: number; p95: number; p99: number } | undefined) => (x ? `${x.p50} / ${x.p95} / ${x.p99}` : '—');
const round = (v: number) => Math.round(v * 10) / 10;
const list = (record: Record<string, number>) =>
  Object.entries(record)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || '—';
const PROCESSES = ['worker', 'api', 'temporal', 'anvil'] as const;
const NAMES: Record<string, string> = {
  authorizationWorkflow: 'authorization',
  nonceClaimWorkflow: 'nonce claim',
  merchantRelayerWorkflow: 'relayer (share)',
  webhookDispatchWorkflow: 'webhook dispatcher (share)',
};
const HEAD = ['workflow tasks', 'activity tasks', 'local activities', 'history events', 'history KB', 'actions'];
const t = (f: TemporalFigures | undefined) =>
  f
    ? [f.workflowTasks, f.activityTasks, f.localActivities, f.historyEvents, round(f.historyBytes / 1024), f.actions].map(String)
    : ['—', '—', '—', '—', '—', '—'];
const gas = (g: GasFigures) => (g.n === 0 ? '—' : g.min === g.max ? `${g.mean}` : `${g.mean} (${g.min}–${g.max})`);
const cost = (k: LifecycleCost) => [PROCESSES.map((p) => k.cpuMs[p] ?? '—').join(' / '), String(k.cpuMsTotal), ...t(k.temporal?.total)];

export function holdsMarkdown(r: HoldResults): string {
  const [p1, p2] = r.amounts.parts;
  const g = r.gasUsed;
  const gasSum = (x: HoldResults['gasUsed']['authcap']) => x.authorize.mean + x.capture1.mean + x.capture2.mean + x.void.mean;
  const lines = [
    `**Held payments** (each: hold ${r.amounts.amount} → capture ${p1} → capture ${p2} → void the rest, ${r.amounts.rest}. authcap: through the API, the signature's answer once held, each part with its own Idempotency-Key answered at depth, the void followed by GET ?wait=30&state=held until the state leaves \`held\`. Floor: the same escrow calls as bare viem transactions from the merchant key (the operator), the payer's signature of the collector's ReceiveWithAuthorization first, each call polled every 20 ms to its receipt and the depth; authcap's whole includes its create, which the floor has no counterpart of)`,
    '',
    markdownTable([
      [
        'concurrency',
        'n',
        'floor held/s',
        'authcap held/s',
        'ratio',
        'authcap whole p50 / p95 ms',
        'floor whole p50 / p95 ms',
        'ratio p50 / p95',
        'plain lifecycles/s, whole p50 ms',
      ],
      ...r.rows.map((row) => [
        String(row.concurrency),
        String(row.n),
        String(row.floor.heldPerSecond),
        String(row.authcap.heldPerSecond),
        `${row.ratioToFloor.throughput}×`,
        `${row.authcap.latency.total!.p50} / ${row.authcap.latency.total!.p95}`,
        `${row.floor.latency.total!.p50} / ${row.floor.latency.total!.p95}`,
        `${row.ratioToFloor.p50}× / ${row.ratioToFloor.p95}×`,
        `${row.plain.lifecyclesPerSecond}, ${row.plain.latency.total!.p50}`,
      ]),
    ]),
    '',
  ];
  for (const row of r.rows) {
    const a = row.authcap.latency;
    const f = row.floor.latency;
    lines.push(
      `Each step at concurrency ${row.concurrency} (ms, p50 / p95 / p99; a plain payment's beside it from the same stack)`,
      '',
      markdownTable([
        ['step', 'authcap', 'floor', 'authcap ÷ floor, p50', 'plain payment'],
        ['create (POST /v1/authorizations)', d(a.create), '—', '', `${d(row.plain.latency.create)} (create)`],
        [
          'sign → held (floor: sign + authorize)',
          d(a.sign),
          d(f.authorize),
          `${row.ratioToFloor.byStepP50['sign → held / authorize']}×`,
          `${d(row.plain.latency.sign)} (sign → stored)`,
        ],
        [`capture ${p1}`, d(a.capture1), d(f.capture1), `${row.ratioToFloor.byStepP50.capture1}×`, `${d(row.plain.latency.capture)} (capture)`],
        [`capture ${p2}`, d(a.capture2), d(f.capture2), `${row.ratioToFloor.byStepP50.capture2}×`, ''],
        ['void → left held', d(a.void), d(f.void), `${row.ratioToFloor.byStepP50.void}×`, ''],
        ['whole', d(a.total), d(f.total), `${row.ratioToFloor.p50}×`, d(row.plain.latency.total)],
      ]),
      '',
      `The API's answers at concurrency ${row.concurrency}: ${list(row.authcap.answers)}.`,
      '',
    );
  }
  lines.push(
    `**Gas per step** (mean over every receipt of the run, min–max where they differ; the merchant key pays each; a hold's steps beside a plain capture's receiveWithAuthorization)`,
    '',
    markdownTable([
      ['step', 'authcap', 'floor (the same calls)', 'n (authcap / floor)'],
      ['authorize (placing the hold)', gas(g.authcap.authorize), gas(g.floor.authorize), `${g.authcap.authorize.n} / ${g.floor.authorize.n}`],
      [`capture, first part (${p1})`, gas(g.authcap.capture1), gas(g.floor.capture1), `${g.authcap.capture1.n} / ${g.floor.capture1.n}`],
      [`capture, second part (${p2})`, gas(g.authcap.capture2), gas(g.floor.capture2), `${g.authcap.capture2.n} / ${g.floor.capture2.n}`],
      ['void (the rest)', gas(g.authcap.void), gas(g.floor.void), `${g.authcap.void.n} / ${g.floor.void.n}`],
      ['a held payment, all four', String(gasSum(g.authcap)), String(gasSum(g.floor)), ''],
      ['a plain capture (receiveWithAuthorization)', gas(g.plainCapture), '', String(g.plainCapture.n)],
    ]),
    '',
    `Mean gas by row (authorize / capture / capture / void): ${r.rows.map((row) => `concurrency ${row.concurrency}: ${row.authcap.gasMean ? [row.authcap.gasMean.authorize, row.authcap.gasMean.capture1, row.authcap.gasMean.capture2, row.authcap.gasMean.void].join(' / ') : '—'}`).join('; ')}. Gas depends on the storage a call finds: an authorize that finds the operator's token store empty (one at a time) sets its token balance from zero, one beside other holds only changes it; a void that empties the store is refunded for clearing that balance, one beside other holds is not. The run's first held payment (the warm-up, not in the table) on a fresh chain: authorize ${g.warmUp.authorize}, capture ${g.warmUp.capture1} then ${g.warmUp.capture2}, void ${g.warmUp.void}.`,
    '',
    `Node calls per held payment one at a time: authcap ${r.rpcPerHeldPayment.authcap.total} (${list(r.rpcPerHeldPayment.authcap.byMethod)}; the worker's idle background included), the floor ${r.rpcPerHeldPayment.floor.total} (${list(r.rpcPerHeldPayment.floor.byMethod)}).`,
    '',
    "**Cost per held payment, beside a plain payment's** (the same measures as the lifecycle rows: each process's CPU time over the phase ÷ payments, from /proc, the bench not counted; Temporal: every workflow a payment causes, from up to 30 sampled histories 6 s after the phase, plus its share of the relayer and the webhook dispatcher in the phase)",
    '',
    markdownTable([
      ['concurrency', 'n', 'payment', 'CPU ms worker / API / Temporal / anvil', 'CPU ms total', ...HEAD, 'still open'],
      ...r.rows.flatMap((row) => [
        [String(row.concurrency), String(row.n), 'held', ...cost(row.authcap.cost), `${row.authcap.openAfter} of ${row.authcap.cost.temporal?.sampled ?? 0}`],
        [String(row.concurrency), String(row.n), 'plain', ...cost(row.plain.cost), ''],
      ]),
    ]),
    '',
  );
  const big = (e: { eventType: string; bytes: number } | null) => (e ? `${round(e.bytes / 1024)} KB (${e.eventType})` : '—');
  lines.push(
    `The relayer's largest history event in each phase (an activity's input, or a run's start carrying its in-flight transactions and remembered answers over; Temporal refuses a payload over 2 MB and warns from 256 KB): ${r.rows
      .map((row) => `concurrency ${row.concurrency}: held ${big(row.authcap.largestRelayerEvent)}, plain ${big(row.plain.largestRelayerEvent)}`)
      .join('; ')}.`,
    '',
  );
  const focus = r.rows.at(-1)!;
  const held = focus.authcap.cost.temporal;
  const plain = focus.plain.cost.temporal;
  if (held && plain) {
    const types = [...new Set([...Object.keys(held.byWorkflow), ...Object.keys(plain.byWorkflow)])];
    lines.push(
      `At concurrency ${focus.concurrency}, by workflow (per payment):`,
      '',
      markdownTable([
        ['workflow', 'payment', ...HEAD, 'memo upserts'],
        ...types.flatMap((type) => [
          [NAMES[type] ?? type, 'held', ...t(held.byWorkflow[type]), String(held.byWorkflow[type]?.memoUpserts ?? '—')],
          [NAMES[type] ?? type, 'plain', ...t(plain.byWorkflow[type]), String(plain.byWorkflow[type]?.memoUpserts ?? '—')],
        ]),
        ['total', 'held', ...t(held.total), String(held.total.memoUpserts)],
        ['total', 'plain', ...t(plain.total), String(plain.total.memoUpserts)],
      ]),
      '',
      `Actions per payment at concurrency ${focus.concurrency}: held ${list(held.total.actionsByKind)}; plain ${list(plain.total.actionsByKind)}.`,
      `The Temporal server per payment at concurrency ${focus.concurrency}: held: frontend ${list(focus.authcap.serverCalls.frontend)}; writes ${list(focus.authcap.serverCalls.writes ?? {})}. Plain: frontend ${list(focus.plain.serverCalls.frontend)}; writes ${list(focus.plain.serverCalls.writes ?? {})}.`,
      '',
    );
  }
  if (r.steps) {
    const stepRows = (kind: 'held' | 'plain', names: Record<string, string>) =>
      Object.entries(r.steps![kind].byStep).map(([step, byType]) => {
        const w = (type: string) => byType[type];
        const sum = Object.values(byType);
        const add = (k: 'workflowTasks' | 'activityTasks' | 'historyEvents' | 'historyBytes' | 'actions') => round(sum.reduce((a, f) => a + f[k], 0));
        return [
          kind,
          names[step] ?? step,
          String(w('authorizationWorkflow')?.workflowTasks ?? 0),
          String(w('merchantRelayerWorkflow')?.workflowTasks ?? 0),
          String(w('webhookDispatchWorkflow')?.workflowTasks ?? 0),
          String(add('workflowTasks')),
          String(add('activityTasks')),
          String(add('historyEvents')),
          String(round(add('historyBytes') / 1024)),
          String(add('actions')),
        ];
      });
    lines.push(
      `**What each step costs Temporal, one at a time** (per payment, over the ${r.steps.held.sampled} held and ${r.steps.plain.sampled} plain payments of the one-at-a-time rows: the events recorded from a step's request to the next step's; a payment's own workflows keep everything after its last answer on its last step, and the relayer's and the dispatcher's events after it land on the next payment's create)`,
      '',
      markdownTable([
        [
          'payment',
          'step',
          'workflow tasks: authorization',
          'relayer',
          'webhook dispatcher',
          'workflow tasks, all',
          'activity tasks',
          'history events',
          'history KB',
          'actions',
        ],
        ...stepRows('held', { sign: 'sign → held', capture1: `capture ${p1}`, capture2: `capture ${p2}`, void: 'void → left held, and after' }),
        ...stepRows('plain', { sign: 'sign → stored', capture: 'capture → captured, and after' }),
      ]),
      '',
    );
  }
  if (r.steps) {
    const top = (o: Record<string, { events: number; bytes: number }>) =>
      Object.entries(o)
        .slice(0, 6)
        .map(([k, v]) => `${k} ${v.events} × → ${round(v.bytes / 1024)} KB`)
        .join(', ');
    lines.push(
      `A payment's own workflows' history by event type, one at a time (per payment, largest first): held ${top(r.steps.held.ownByEventType)}; plain ${top(r.steps.plain.ownByEventType)}.`,
      '',
    );
  }
  const a = r.audit;
  lines.push(
    `Holds audit: ${a.ok ? 'passed' : '**FAILED**'}: ${a.holds} holds, ${a.holdsWrong.length} without exactly PaymentAuthorized, PaymentCaptured ×2 and PaymentVoided of their amounts in the transactions authcap reported${a.holdsWrong.length ? ` (${a.holdsWrong.slice(0, 3).join('; ')})` : ''}; the merchant key sent ${a.merchantTransactions} transactions, ${a.merchantTransactionsExpected} expected (4 per held payment, authcap's and the floor's, 1 per plain capture). Webhook deliveries received over the rows: ${r.webhookDeliveries}. Overload answers waited out: ${r.apiRetries}.`,
    '',
  );
  return lines.join('\n');
}

/** A holds-only run (`--only holds`): what ran where, and the row. */
export interface HoldRun {
  startedAt: string;
  durationSeconds: number;
  command: string;
  machine: { cpus: number; model: string; memoryGb: number; node: string; platform: string };
  configuration: string;
  holds: HoldResults;
}

/**
 * Writes latest-holds-<kind>.json and .md (kind: quick, full, -postgres on the production shape) under
 * test/bench/results/, or under BENCH_OUT_DIR when set; nothing the other runs write is touched.
 */
export function writeHoldResults(run: HoldRun, kind: string): string[] {
  const dir = process.env.BENCH_OUT_DIR || fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const md = [
    `Run ${run.startedAt} (\`${run.command}\`, ${run.durationSeconds} s) on ${run.machine.cpus} × ${run.machine.model}, ${run.machine.memoryGb} GB, Node ${run.machine.node}.`,
    `Configuration: ${run.configuration}.`,
    '',
    holdsMarkdown(run.holds),
  ].join('\n');
  const files: [string, string][] = [
    [join(dir, `latest-holds-${kind}.json`), `${JSON.stringify(run, null, 2)}\n`],
    [join(dir, `latest-holds-${kind}.md`), md],
  ];
  for (const [path, text] of files) writeFileSync(path, text);
  return files.map(([path]) => path);
}
