// One row of refunds through the HTTP API (test/bench/refundFlows.ts runs them): each refund asked for as
// an order service does (the API's own bounded wait: a 201 is final; after a 202, GET
// /v1/refunds/{id} every 250 ms), the phase's CPU from /proc, the Temporal server's calls, and then
// what the refunds cost Temporal, read from their workflows' histories (test/bench/lifecycleCost.ts).
import { randomUUID } from 'node:crypto';
import type { Address, Hex, PublicClient } from 'viem';
import { parseResourceId } from '../../domain/ids.js';
import { parseAmount } from '../../domain/amount.js';
import { refundsWorkflowId } from '../../domain/refunds.js';
import type { Stack } from '../../devstack/stack.js';
import type { AuthcapApi, Payer } from './authcapFlows.js';
import type { BareBaseline } from './baselines/bareCapture.js';
import { spread, temporalPerUnit } from './lifecycleCost.js';
import type { UsageSampler } from './processUsage.js';
import { phase } from './progress.js';
import type { AuditedRefund } from './refundAudit.js';
import type { RefundRow } from './results.js';
import { distribution, pool, ratio } from './stats.js';
import { scrapeServerCounters, serverCallsPerLifecycle } from './temporalServerCalls.js';

/** Every authorization is for 0.01 (test/bench/authcapFlows.ts); by default each refund gives all of it back. */
export const REFUND_AMOUNT = process.env.BENCH_REFUND_AMOUNT ?? '0.01';
const POLL_AFTER_202_MS = 250;

export interface RefundContext {
  dev: Stack['devJson'];
  api: AuthcapApi;
  chain: PublicClient;
  sampler: UsageSampler;
  /** The worker's /metrics and the Temporal server's. */
  metricsUrl: string;
  temporalMetricsUrl: string;
  /** Baseline A, for the partial captures' floor. */
  bare: BareBaseline;
  /** A key with gas the bench controls: the refund floor mints it tokens and sends transfers from it. */
  floorKey: Hex;
  payerAt(i: number): Payer;
}

export interface MeasuredRow {
  row: RefundRow;
  refunds: AuditedRefund[];
  window: { startMs: number; endMs: number };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (v: number) => Math.round(v * 10) / 10;

/** One refund as an order service asks for it: the API's own wait, then GET after a 202. */
async function refundOnce(ctx: RefundContext, id: string): Promise<{ ms: number; recordedMs: number; answered: number; refund: any }> {
  const started = performance.now();
  const wallStart = Date.now();
  const res = await ctx.api.call('POST', `/v1/authorizations/${id}/refunds`, { amount: REFUND_AMOUNT }, { 'idempotency-key': randomUUID() });
  if (res.status !== 201 && res.status !== 202) throw new Error(`refund of ${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
  let refund = res.body;
  while (refund.state === 'pending') {
    await sleep(POLL_AFTER_202_MS);
    const read = await ctx.api.call('GET', `/v1/refunds/${refund.id}`);
    if (read.status !== 200) throw new Error(`GET refund ${refund.id} answered ${read.status}`);
    refund = read.body;
  }
  if (refund.state !== 'succeeded') throw new Error(`refund ${refund.id} ${refund.state}: ${JSON.stringify(refund.failure)}`);
  return { ms: performance.now() - started, recordedMs: Math.max(0, Date.parse(refund.succeededAt) - wallStart), answered: res.status, refund };
}

export async function refundRow(ctx: RefundContext, ids: string[], concurrency: number, floor: RefundRow['floor'], p: { tick(): void }): Promise<MeasuredRow> {
  const serverBefore = await scrapeServerCounters(ctx.temporalMetricsUrl, ctx.dev.temporalNamespace);
  ctx.sampler.start();
  const t0 = performance.now();
  const windowStartMs = Date.now();
  const runs = await pool(ids, concurrency, async (id, i) => {
    const run = await refundOnce(ctx, id);
    p.tick();
    return { ...run, payer: ctx.payerAt(i).address };
  });
  const seconds = (performance.now() - t0) / 1000;
  const usage = await ctx.sampler.stop();
  const windowEndMs = Date.now();
  const serverCalls = serverCallsPerLifecycle(serverBefore, await scrapeServerCounters(ctx.temporalMetricsUrl, ctx.dev.temporalNamespace), ids.length);
  const succeeded = distribution(runs.map((r) => r.ms));
  const answers: Record<string, number> = {};
  for (const r of runs) answers[r.answered] = (answers[r.answered] ?? 0) + 1;
  const cpuMs = Object.fromEntries(Object.entries(usage).map(([name, u]) => [name, round(u.cpuMs / ids.length)]));
  const row: RefundRow = {
    concurrency,
    n: ids.length,
    succeeded,
    recorded: distribution(runs.map((r) => r.recordedMs)),
    answers,
    refundsPerSecond: round(ids.length / seconds),
    floor,
    ratioToFloor: {
      p50: ratio(succeeded.p50, floor.settled.p50),
      p95: ratio(succeeded.p95, floor.settled.p95),
      p99: ratio(succeeded.p99, floor.settled.p99),
      throughput: ratio(ids.length / seconds, floor.transfersPerSecond),
    },
    cost: { cpuMs, cpuMsTotal: round(Object.values(cpuMs).reduce((a, b) => a + b, 0)), temporal: null },
    serverCalls,
  };
  return { row, refunds: runs.map((r) => audited(r.refund, r.payer)), window: { startMs: windowStartMs, endMs: windowEndMs } };
}

/**
 * Temporal per refund: the sampled refunds' workflows (`refunds-<authorization first run id>`) after a pause, so what the phase set going (the relayer's look at in-flight
 * transactions every 5 s, the ledger closing) is in, plus the relayer's and the webhook dispatcher's
 * events in the window ÷ refunds.
 */
export async function withCost(ctx: RefundContext, { row, window }: MeasuredRow, ids: string[]): Promise<void> {
  const p = phase('  reading the sampled refunds\u2019 histories', 1);
  await sleep(6_000);
  row.cost.temporal = await temporalPerUnit({
    address: ctx.dev.temporalAddress,
    namespace: ctx.dev.temporalNamespace,
    sampledRoots: spread(ids, 30).map((id) => ({ workflowId: refundsWorkflowId(parseResourceId(id)!.runId) })),
    units: ids.length,
    window: { ...window, endMs: window.endMs + 6_000 },
  }).catch((err: Error) => {
    process.stderr.write(`bench: reading refund histories failed: ${err.message}\n`);
    return null;
  });
  const t = row.cost.temporal?.total;
  p.done(`per refund: ${row.cost.cpuMsTotal} CPU ms${t ? `, ${t.workflowTasks} workflow tasks, ${t.historyEvents} events, ${t.actions} actions` : ''}`);
}

/** What authcap reported, for the audit to hold against the chain. */
export function audited(refund: { id: string; amount: string; transactionHash: Hex }, payer: Address): AuditedRefund {
  return { id: refund.id, payer, amountMinor: parseAmount(refund.amount), transactionHash: refund.transactionHash };
}
