// The refunds' part of a run's report: latency against the transfer floor, partial
// captures against a capture plus a transfer, cost per refund, what reads cost merchants who never
// refund, and the refunds' audit line.
import { markdownTable } from 'markdown-table';
import type { RefundAuditFindings } from './refundAudit.js';
import type { RefundResults } from './results.js';
import type { TemporalFigures } from './lifecycleCost.js';

const d = (x: { p50: number; p95: number; p99: number }) => `${x.p50} / ${x.p95} / ${x.p99}`;
const list = (record: Record<string, number>, unit = '') =>
  Object.entries(record)
    .map(([k, v]) => `${k} ${v}${unit}`)
    .join(', ') || '—';
const round = (v: number) => Math.round(v * 10) / 10;
const PROCESSES = ['worker', 'api', 'temporal', 'anvil'] as const;
const NAMES: Record<string, string> = {
  refundsWorkflow: 'refunds (ledger)',
  merchantRelayerWorkflow: 'relayer (share)',
  webhookDispatchWorkflow: 'webhook dispatcher (share)',
};

export function refundsMarkdown(r: RefundResults): string {
  const one = r.rows[0]!;
  const g = r.gasUsed;
  const head = ['workflow tasks', 'activity tasks', 'local activities', 'history events', 'history KB', 'actions'];
  const t = (f: TemporalFigures | undefined) =>
    f
      ? [f.workflowTasks, f.activityTasks, f.localActivities, f.historyEvents, round(f.historyBytes / 1024), f.actions].map(String)
      : ['—', '—', '—', '—', '—', '—'];
  const focus = r.rows.at(-1)!;
  const lines = [
    `**One refund at a time** (ms, p50 / p95 / p99; each refund gives back ${r.amount} of a captured 0.01, with the API's own 15 s wait, GET /v1/refunds/{id} every 250 ms after a 202; ratio to the floor from the same run)`,
    '',
    markdownTable([
      ['', 'request → in a block', 'request → succeeded (depth)', 'node calls per refund', 'gas used'],
      ['floor: bare viem transfer(payer, amount)', d(r.floor.included), d(r.floor.settled), String(r.floor.rpc.total), String(g.transfer)],
      [
        'authcap (POST refunds, API + Temporal)',
        '—',
        `${d(one.succeeded)} (recorded by its workflow: ${d(one.recorded)})`,
        String(r.rpcPerRefund.total),
        String(g.transferWithAuthorization),
      ],
      [
        'authcap ÷ floor',
        '',
        `${one.ratioToFloor.p50}× / ${one.ratioToFloor.p95}× / ${one.ratioToFloor.p99}×`,
        String(round(r.rpcPerRefund.total / r.floor.rpc.total)),
        `${Math.round((g.transferWithAuthorization / g.transfer) * 100) / 100}× (+${g.transferWithAuthorization - g.transfer})`,
      ],
    ]),
    '',
    `authcap's refund is the merchant key's own EIP-3009 transferWithAuthorization, one signature check more than a plain transfer, because the token then accepts each refund's nonce once: no retry, re-sign or rebroadcast can pay a refund twice. Gas from the receipts: ${g.transferWithAuthorization} against ${g.transfer} for the plain transfer (a capture's receiveWithAuthorization: ${g.receiveWithAuthorization}); by the EVM's gas schedule most of the ${g.transferWithAuthorization - g.transfer} more is the token's record of the used nonce (a new storage slot, 22,100), the rest the signature check (ecrecover, 3,000, and the EIP-712 hashing) and the longer calldata. "Recorded by its workflow" is request → the succeededAt the refunds workflow stamps at the depth; the rest of "succeeded" is the API noticing it (it re-reads the ledger's memo 250 ms after the answer, then every 150 ms for 3 s, then every 500 ms).`,
    `authcap's node calls per refund by method: ${list(r.rpcPerRefund.byMethod)} (the worker's idle background included). Answers: ${Object.entries(one.answers)
      .map(([k, v]) => `${v} × ${k}`)
      .join(', ')}.`,
    '',
    '**Refunds at concurrency** (each of a different authorization; the floor sends as many transfers from one key at the same concurrency)',
    '',
    markdownTable([
      ['concurrency', 'n', 'floor transfers/s', 'authcap refunds/s', 'ratio', 'authcap succeeded p50 / p95 ms', 'floor p50 / p95 ms', 'answers'],
      ...r.rows.map((row) => [
        String(row.concurrency),
        String(row.n),
        String(row.floor.transfersPerSecond),
        String(row.refundsPerSecond),
        `${row.ratioToFloor.throughput}×`,
        `${row.succeeded.p50} / ${row.succeeded.p95}`,
        `${row.floor.settled.p50} / ${row.floor.settled.p95}`,
        Object.entries(row.answers)
          .map(([k, v]) => `${v} × ${k}`)
          .join(', '),
      ]),
    ]),
    '',
    `**Partial capture, one at a time** (capture {amount: ${r.partialCapture.kept}} of an authorized 0.01 → captured: the capture at depth, then the rest back to the payer at depth)`,
    '',
    markdownTable([
      ['', 'request → captured, ms p50 / p95 / p99'],
      ["floor: baseline A's capture to depth, then the floor's transfer to depth", d(r.partialCapture.floor)],
      ['authcap (POST capture {amount})', d(r.partialCapture.captured)],
      ['authcap ÷ floor', `${r.partialCapture.ratio.p50}× / ${r.partialCapture.ratio.p95}×`],
    ]),
    '',
    `**Cost per refund** (CPU: each process's CPU time over the refund phase ÷ refunds, from /proc, the bench itself not counted. Temporal: every workflow a refund causes, the authorization's refunds workflow \`refunds-<its first run id>\`, read from up to 30 sampled refunds after a 6 s pause, plus its share of the merchant relayer and of the webhook dispatcher when an endpoint is registered: their events in the phase ÷ refunds. Each refund is its authorization's first, so it starts the ledger; ${
      r.amount === '0.01'
        ? 'giving back everything captured, it also closes the ledger and ends its stream, so all it costs is counted'
        : 'giving back part, it leaves the ledger open until the refund window ends (30 days): that close is not counted'
    })`,
    '',
    markdownTable([
      ['concurrency', 'n', 'sampled', 'CPU ms worker / API / Temporal / anvil', 'CPU ms total', ...head],
      ...r.rows.map((row) => [
        String(row.concurrency),
        String(row.n),
        String(row.cost.temporal?.sampled ?? 0),
        PROCESSES.map((p) => row.cost.cpuMs[p] ?? '—').join(' / '),
        String(row.cost.cpuMsTotal),
        ...t(row.cost.temporal?.total),
      ]),
    ]),
    '',
  ];
  const temporal = focus.cost.temporal;
  if (temporal) {
    lines.push(
      `At concurrency ${focus.concurrency}, by workflow (per refund):`,
      '',
      markdownTable([
        ['workflow', ...head, 'memo upserts'],
        ...Object.entries(temporal.byWorkflow).map(([type, f]) => [NAMES[type] ?? type, ...t(f), String(f.memoUpserts)]),
        ['total', ...t(temporal.total), String(temporal.total.memoUpserts)],
      ]),
      '',
      `Actions per refund at concurrency ${focus.concurrency} by kind: ${list(temporal.total.actionsByKind)}.`,
      `The Temporal server per refund at concurrency ${focus.concurrency}: frontend ${list(focus.serverCalls.frontend)}; persistence ${list(focus.serverCalls.persistence)}.`,
      '',
    );
  }
  const reads = r.reads;
  lines.push(
    "**What merchants who never refund pay** (GET /v1/authorizations/{id} one at a time on a quiet stack after the refund rows, the three kinds interleaved over four rounds; Temporal DescribeWorkflowExecution per read from the server's metrics, each kind read in a block of its own)",

    '',
    markdownTable([
      ['the authorization is', 'GET ms p50 / p95 / p99', 'describes per read'],
      ['stored (voided after)', d(reads.stored.latency), String(reads.stored.describesPerRead)],
      ['captured, never refunded (the partial captures)', d(reads.captured.latency), String(reads.captured.describesPerRead)],
      ['captured and refunded', d(reads.refunded.latency), String(reads.refunded.describesPerRead)],
    ]),
    '',
    `The only new work on a payment that is never refunded is one DescribeWorkflowExecution of its refunds workflow (NotFound) each time a captured authorization is read (GET, and a GET ?wait that ends captured): ${round(reads.captured.latency.p50 - reads.stored.latency.p50)} ms at p50 here. A capture's own answer does not read it, a lifecycle without refunds runs no refund step, and an authorization workflow loads the refund machine and procedure only when a partial capture gives something back; the cost per lifecycle rows above are measured before any refund runs in this bench, as before refunds existed (compare them with an earlier run's).`,
    '',
  );
  return lines.join('\n');
}

export function refundAuditLine(a: RefundAuditFindings | undefined): string {
  if (!a) return '';
  return ` Refunds: ${a.refunds} succeeded (partial captures' releases included), ${a.withoutOneUse} without exactly one AuthorizationUsed(merchant, nonce) in their own transaction, ${a.withoutTransfer} without their one Transfer merchant → payer of their amount; the merchant's Transfer logs sum to ${a.transferredMinor} minor units, authcap reported ${a.refundedMinor}.`;
}
