// The holds row (`npm run bench -- --only holds [--quick]`): held payments through the API against the
// floor of bare escrow calls (test/bench/holdFlows.ts), with plain payments on the same stack beside them.
// For each concurrency (1 first, then the plan's): the floor's N held payments, then authcap's N, then N
// plain lifecycles, each phase measured as the lifecycle rows are (test/bench/main.ts): latency of each
// step and of the whole, payments per second, each process's CPU from /proc ÷ payments, the Temporal
// server's calls, and Temporal per payment from up to 30 sampled histories plus the relayer's and the
// webhook dispatcher's share (test/bench/lifecycleCost.ts). One at a time, the sampled histories'
// events are also put on the step they happened in. Then gas per step from the receipts, and an audit
// of every hold's escrow events and the merchant key's transaction count.
import { Client } from '@temporalio/client';
import proto, { type temporal } from '@temporalio/proto';
import { getAbiItem, parseEventLogs, parseUnits, type Address, type Hex, type PublicClient } from 'viem';
import type { Stack } from '../../devstack/stack.js';
import { devAccounts } from '../../devstack/token.js';
import { escrowAbi } from '../../domain/escrowAbi.js';
import { parseResourceId } from '../../domain/ids.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { WEBHOOK_DISPATCH_WORKFLOW_TYPE } from '../../domain/webhookDispatch.js';
import type { AuthcapApi, Payer } from './authcapFlows.js';
import {
  FLOOR_STEPS,
  HELD_STEPS,
  HOLD,
  PLAIN_STEPS,
  createHoldFloor,
  heldPayment,
  plainPayment,
  type FloorTiming,
  type HeldTiming,
  type HoldHashes,
  type PlainTiming,
} from './holdFlows.js';
import { addEvents, emptyFigures, runsOf, spread, temporalPerLifecycle, type TemporalFigures } from './lifecycleCost.js';
import type { UsageSampler } from './processUsage.js';
import { phase } from './progress.js';
import type { GasFigures, HoldResults, HoldRow, LifecycleCost } from './results.js';
import { distribution, perUnit, pool, ratio, total, type Distribution } from './stats.js';
import { connectTemporal } from './temporalConnection.js';
import { scrapeServerCounters, serverCallsPerLifecycle } from './temporalServerCalls.js';
import { rpcCallsByMethod } from './workerCounters.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = proto.temporal.api.enums.v1.EventType;
const SHARED_TYPES = ['merchantRelayerWorkflow', WEBHOOK_DISPATCH_WORKFLOW_TYPE];

export interface HoldContext {
  dev: Stack['devJson'];
  api: AuthcapApi;
  chain: PublicClient;
  sampler: UsageSampler;
  /** The worker's /metrics and the Temporal server's. */
  metricsUrl: string;
  temporalMetricsUrl: string;
  /** Webhook deliveries received so far (the bench's receiver). */
  deliveries(): number;
  payerAt(i: number): Payer;
}

export interface HoldPlan {
  /** Held payments one at a time (and as many of the floor's and plain ones). */
  sequential: number;
  /** [concurrency, payments] after the one-at-a-time row. */
  sweep: [number, number][];
}

const round = (v: number) => Math.round(v * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** What the phase set going (the relayer's look at in-flight transactions every 5 s, workflows closing) lands in this pause. */
const SETTLE_MS = 6_000;

export async function runHoldRows(ctx: HoldContext, plan: HoldPlan): Promise<HoldResults> {
  const { dev } = ctx;
  const network = dev.networks[0]!;
  if (!network.escrow) throw new Error(`the bench's network ${network.network} names no escrow: holds cannot run`);
  const token = network.tokens[0]!;
  const merchant = devAccounts().merchant;
  if (merchant.address.toLowerCase() !== dev.merchantAddress.toLowerCase())
    throw new Error(`the dev merchant key ${merchant.address} is not the stack's merchant ${dev.merchantAddress}`);
  const read = (functionName: 'name' | 'version') => ctx.chain.readContract({ address: token.address, abi: tokenAbi, functionName });
  const floor = createHoldFloor({
    rpcUrl: dev.rpcUrl,
    chainId: dev.chainId,
    token,
    domain: { name: await read('name'), version: await read('version'), chainId: dev.chainId, verifyingContract: token.address },
    escrow: network.escrow,
    operatorKey: merchant.privateKey,
    confirmations: 1,
  });
  const fromBlock = await ctx.chain.getBlockNumber();
  const nonceBefore = await ctx.chain.getTransactionCount({ address: dev.merchantAddress, blockTag: 'latest' });
  const deliveriesBefore = ctx.deliveries();
  const all = { held: [] as HeldTiming[], floor: [] as FloorTiming[], plain: [] as PlainTiming[] };

  // Warm-up, not measured: the first authorize of an operator deploys its token store (the floor's and
  // authcap's operator are the same key), and the worker loads the hold's code on its first hold.
  let p = phase('holds: warm-up (1 held, 2 plain, 1 floor)', 4);
  const warmUp = { held: await heldPayment(ctx.api, ctx.payerAt(0), 'bench-hold-warm'), plain: [] as PlainTiming[] };
  p.tick();
  for (let i = 0; i < 2; i++) {
    warmUp.plain.push(await plainPayment(ctx.api, ctx.payerAt(i + 1), 'bench-hold-plain-warm'));
    p.tick();
  }
  await sleep(1_000);
  await floor.heldPayment(ctx.payerAt(3));
  p.done();

  const rows: HoldRow[] = [];
  const rowRuns: HeldTiming[][] = [];
  let rpc: HoldResults['rpcPerHeldPayment'] | undefined;
  let steps: HoldResults['steps'] = null;
  for (const [c, n] of [[1, plan.sequential], ...plan.sweep] as [number, number][]) {
    // The floor first, while authcap's relayer has nothing in flight: both send from the merchant key.
    p = phase(`holds at concurrency ${c}: floor`, n);
    const floorRpcBefore = floor.rpcCalls();
    const t0 = performance.now();
    const floorRuns = await pool(
      Array.from({ length: n }, (_, i) => i),
      c,
      async (i) => {
        const r = await floor.heldPayment(ctx.payerAt(i));
        p.tick();
        return r;
      },
    );
    const floorSeconds = (performance.now() - t0) / 1000;
    all.floor.push(...floorRuns);
    const floorLatency = latencyOf(floorRuns, FLOOR_STEPS);
    p.done(`${round(n / floorSeconds)} held payments/s, whole p50 ${floorLatency.total!.p50} ms`);

    p = phase(`holds at concurrency ${c}: authcap`, n);
    const rpcBefore = await rpcCallsByMethod(ctx.metricsUrl);
    const measured = await measure(ctx, n, c, (i) => heldPayment(ctx.api, ctx.payerAt(i), `bench-hold-c${c}`), p);
    const heldRpc = perUnit(rpcBefore, await rpcCallsByMethod(ctx.metricsUrl), n);
    all.held.push(...measured.runs);
    rowRuns.push(measured.runs);
    const heldLatency = latencyOf(measured.runs, HELD_STEPS);
    p.done(`${round(n / measured.seconds)} held payments/s, whole p50 ${heldLatency.total!.p50} ms (floor ${floorLatency.total!.p50} ms)`);
    if (c === 1) {
      const floorRpc = perUnit(floorRpcBefore, floor.rpcCalls(), n);
      rpc = { authcap: { byMethod: heldRpc, total: total(heldRpc) }, floor: { byMethod: floorRpc, total: total(floorRpc) } };
    }
    const heldCost = await costOf(ctx, measured, 'held payment');
    const heldLargest = await largestRelayerEvent(ctx, measured.window);
    const openAfter = await stillOpen(
      ctx,
      spread(
        measured.runs.map((r) => r.id),
        30,
      ),
    );
    const heldSteps = c === 1 ? await stepFigures(ctx, measured.runs, HELD_STEPS, measured.window) : undefined;

    p = phase(`holds at concurrency ${c}: plain lifecycles`, n);
    const plainMeasured = await measure(ctx, n, c, (i) => plainPayment(ctx.api, ctx.payerAt(i), `bench-hold-plain-c${c}`), p);
    all.plain.push(...plainMeasured.runs);
    const plainLatency = latencyOf(plainMeasured.runs, PLAIN_STEPS);
    p.done(`${round(n / plainMeasured.seconds)} lifecycles/s, whole p50 ${plainLatency.total!.p50} ms`);
    const plainCost = await costOf(ctx, plainMeasured, 'plain lifecycle');
    const plainLargest = await largestRelayerEvent(ctx, plainMeasured.window);
    if (c === 1 && heldSteps) {
      const plainSteps = await stepFigures(ctx, plainMeasured.runs, PLAIN_STEPS, plainMeasured.window);
      steps = { held: heldSteps, plain: plainSteps };
    }

    const byStepP50: Record<string, number | null> = {
      'sign → held / authorize': ratio(heldLatency.sign!.p50, floorLatency.authorize!.p50),
      capture1: ratio(heldLatency.capture1!.p50, floorLatency.capture1!.p50),
      capture2: ratio(heldLatency.capture2!.p50, floorLatency.capture2!.p50),
      void: ratio(heldLatency.void!.p50, floorLatency.void!.p50),
    };
    rows.push({
      concurrency: c,
      n,
      authcap: {
        heldPerSecond: round(n / measured.seconds),
        latency: heldLatency,
        answers: sumAnswers(measured.runs),
        cost: heldCost,
        serverCalls: measured.serverCalls,
        openAfter,
        largestRelayerEvent: heldLargest,
      },
      floor: { heldPerSecond: round(n / floorSeconds), latency: floorLatency },
      ratioToFloor: {
        p50: ratio(heldLatency.total!.p50, floorLatency.total!.p50),
        p95: ratio(heldLatency.total!.p95, floorLatency.total!.p95),
        throughput: ratio(n / measured.seconds, n / floorSeconds),
        byStepP50,
      },
      plain: {
        lifecyclesPerSecond: round(n / plainMeasured.seconds),
        latency: plainLatency,
        cost: plainCost,
        serverCalls: plainMeasured.serverCalls,
        largestRelayerEvent: plainLargest,
      },
    });
  }

  p = phase('holds: gas from receipts, audit', 1);
  const gasUsed = {
    warmUp: Object.fromEntries(
      await Promise.all(
        Object.entries(warmUp.held.hashes).map(async ([step, hash]) => [step, Number((await ctx.chain.getTransactionReceipt({ hash })).gasUsed)] as const),
      ),
    ) as HoldResults['gasUsed']['warmUp'],
    authcap: await gasBySteps(
      ctx.chain,
      all.held.map((r) => r.hashes),
    ),
    floor: await gasBySteps(
      ctx.chain,
      all.floor.map((r) => r.hashes),
    ),
    plainCapture: await gasOf(
      ctx.chain,
      all.plain.map((r) => r.captureHash),
    ),
  };
  for (const [i, row] of rows.entries()) {
    const g = await gasBySteps(
      ctx.chain,
      rowRuns[i]!.map((r) => r.hashes),
    );
    row.authcap.gasMean = { authorize: g.authorize.mean, capture1: g.capture1.mean, capture2: g.capture2.mean, void: g.void.mean };
  }
  const audit = await auditHolds(ctx, network.escrow.escrow, fromBlock, [warmUp.held, ...all.held], {
    nonceBefore,
    expected: 4 * (1 + all.held.length) + 4 * (1 + all.floor.length) + warmUp.plain.length + all.plain.length,
  });
  p.done(
    audit.ok
      ? `ok: ${audit.holds} holds each authorized, captured twice and voided once in the transactions reported; ${audit.merchantTransactions} merchant transactions as expected`
      : `FAILED: ${JSON.stringify(audit)}`,
  );
  return {
    amounts: { amount: HOLD.amount, parts: [...HOLD.parts], rest: HOLD.rest },
    rows,
    rpcPerHeldPayment: rpc!,
    gasUsed,
    steps,
    audit,
    webhookDeliveries: ctx.deliveries() - deliveriesBefore,
    apiRetries: ctx.api.retries,
  };
}

interface Measured<T> {
  runs: T[];
  seconds: number;
  usage: Awaited<ReturnType<UsageSampler['stop']>>;
  serverCalls: HoldRow['authcap']['serverCalls'];
  window: { startMs: number; endMs: number };
}

/** One phase as the lifecycle rows measure it: CPU from /proc and the server's counters around it. */
async function measure<T>(ctx: HoldContext, n: number, c: number, run: (i: number) => Promise<T>, p: { tick(): void }): Promise<Measured<T>> {
  const serverBefore = await scrapeServerCounters(ctx.temporalMetricsUrl, ctx.dev.temporalNamespace);
  ctx.sampler.start();
  const t0 = performance.now();
  const startMs = Date.now();
  const runs = await pool(
    Array.from({ length: n }, (_, i) => i),
    c,
    async (i) => {
      const r = await run(i);
      p.tick();
      return r;
    },
  );
  const seconds = (performance.now() - t0) / 1000;
  const usage = await ctx.sampler.stop();
  const endMs = Date.now();
  const serverCalls = serverCallsPerLifecycle(serverBefore, await scrapeServerCounters(ctx.temporalMetricsUrl, ctx.dev.temporalNamespace), n);
  return { runs, seconds, usage, serverCalls, window: { startMs, endMs } };
}

/** CPU ÷ payments, and Temporal per payment from up to 30 sampled histories after a pause (test/bench/main.ts costPerLifecycle). */
async function costOf(ctx: HoldContext, m: Measured<{ id: string }>, unit: string): Promise<LifecycleCost> {
  const n = m.runs.length;
  const cpuMs = Object.fromEntries(Object.entries(m.usage).map(([name, u]) => [name, round(u.cpuMs / n)]));
  const p = phase(`  reading the sampled ${unit}s' histories`, 1);
  await sleep(SETTLE_MS);
  const temporal = await temporalPerLifecycle({
    address: ctx.dev.temporalAddress,
    namespace: ctx.dev.temporalNamespace,
    sampledIds: spread(
      m.runs.map((r) => r.id),
      30,
    ),
    lifecycles: n,
    window: { ...m.window, endMs: m.window.endMs + SETTLE_MS },
  }).catch((err: Error) => {
    process.stderr.write(`bench: reading histories failed: ${err.message}\n`);
    return null;
  });
  const cpuMsTotal = round(Object.values(cpuMs).reduce((a, b) => a + b, 0));
  const t = temporal?.total;
  p.done(
    `per ${unit}: ${cpuMsTotal} CPU ms (${Object.entries(cpuMs)
      .map(([k, v]) => `${k} ${v}`)
      .join(
        ', ',
      )})${t ? `, ${t.workflowTasks} workflow tasks, ${t.historyEvents} events, ${Math.round(t.historyBytes / 102.4) / 10} KB, ${t.actions} actions` : ''}`,
  );
  return { cpuMs, cpuMsTotal, temporal };
}

function latencyOf<S extends string>(runs: { ms: Record<S, number>; totalMs: number }[], steps: readonly S[]): Record<string, Distribution> {
  return {
    ...Object.fromEntries(steps.map((s) => [s, distribution(runs.map((r) => r.ms[s]))])),
    total: distribution(runs.map((r) => r.totalMs)),
  };
}

function sumAnswers(runs: HeldTiming[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of runs) for (const [k, v] of Object.entries(r.answers)) out[k] = (out[k] ?? 0) + v;
  return out;
}

/** Sampled authorization workflows still running. */
async function stillOpen(ctx: HoldContext, ids: string[]): Promise<number> {
  const connection = await connectTemporal(ctx.dev.temporalAddress);
  try {
    const client = new Client({ connection, namespace: ctx.dev.temporalNamespace });
    const statuses = await pool(ids, 4, async (id) => {
      const { workflowId } = parseResourceId(id)!;
      // The raw call: the handle's describe would decode the memo, which the codec encrypted.
      const described = await client.workflowService.describeWorkflowExecution({ namespace: ctx.dev.temporalNamespace, execution: { workflowId } });
      return described.workflowExecutionInfo?.status;
    });
    return statuses.filter((s) => s === proto.temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING).length;
  } finally {
    await connection.close();
  }
}

/**
 * The relayer's largest event in a phase (and the 6 s after it), as stored: an activity's input, or a
 * run's start that carries its state over. Temporal refuses any one payload over 2 MB (its default).
 */
async function largestRelayerEvent(ctx: HoldContext, window: { startMs: number; endMs: number }): Promise<{ eventType: string; bytes: number } | null> {
  const connection = await connectTemporal(ctx.dev.temporalAddress);
  try {
    const client = new Client({ connection, namespace: ctx.dev.temporalNamespace });
    let largest: { eventType: string; bytes: number } | null = null;
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await client.workflowService.listWorkflowExecutions({
        namespace: ctx.dev.temporalNamespace,
        query: `WorkflowType = '${SHARED_TYPES[0]}'`,
        nextPageToken,
      });
      for (const execution of page.executions ?? []) {
        const events =
          (await client.workflow.getHandle(execution.execution?.workflowId ?? '', execution.execution?.runId ?? undefined).fetchHistory()).events ?? [];
        for (const e of events) {
          const t = eventMs(e);
          if (t < window.startMs || t > window.endMs + SETTLE_MS) continue;
          const bytes = proto.temporal.api.history.v1.History.encode({ events: [e] }).finish().length;
          if (!largest || bytes > largest.bytes) largest = { eventType: EventType[e.eventType ?? 0]?.replace('EVENT_TYPE_', '') ?? String(e.eventType), bytes };
        }
      }
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
    return largest;
  } catch (err) {
    process.stderr.write(`bench: reading the relayer's history failed: ${(err as Error).message}\n`);
    return null;
  } finally {
    await connection.close();
  }
}

type StepFigures = NonNullable<HoldResults['steps']>['held'];

const eventMs = (e: HistoryEvent) => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);

/**
 * Temporal's events one at a time, put on the step they happened in: each payment's own workflows
 * (the authorization workflow, every run, and any child) by the payment's step marks (the last step
 * keeps all that came after it), and the relayer's and webhook dispatchers' events by whichever
 * payment's step was under way (the last step of one payment runs to the next one's create: what it set
 * going after its answer lands there). Per payment.
 */
async function stepFigures(
  ctx: HoldContext,
  runs: { id: string; marks: number[] }[],
  steps: readonly string[],
  window: { startMs: number; endMs: number },
): Promise<StepFigures> {
  const p = phase('  putting the one-at-a-time events on their steps', 1);
  const connection = await connectTemporal(ctx.dev.temporalAddress);
  const buckets = new Map<string, HistoryEvent[]>();
  const own: Record<string, { events: number; bytes: number }> = {};
  const put = (step: string, type: string, e: HistoryEvent) => {
    const key = `${step}\u0000${type}`;
    buckets.set(key, [...(buckets.get(key) ?? []), e]);
  };
  const stepAt = (marks: number[], t: number) => {
    let i = 0;
    while (i + 1 < steps.length && t >= marks[i + 1]!) i++;
    return steps[i]!;
  };
  try {
    const client = new Client({ connection, namespace: ctx.dev.temporalNamespace });
    // The payments' own workflows.
    await pool(runs, 4, async (run) => {
      const { workflowId, runId } = parseResourceId(run.id)!;
      const todo = [{ workflowId, runId }];
      for (let w = todo.pop(); w; w = todo.pop()) {
        const histories = await runsOf(client, w.workflowId, w.runId);
        const type = histories[0]?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
        for (const e of histories.flat()) {
          put(stepAt(run.marks, eventMs(e)), type, e);
          const name = EventType[e.eventType ?? 0]?.replace('EVENT_TYPE_', '') ?? String(e.eventType);
          const bytes = proto.temporal.api.history.v1.History.encode({ events: [e] }).finish().length;
          own[name] = { events: (own[name]?.events ?? 0) + 1, bytes: (own[name]?.bytes ?? 0) + bytes };
          const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
          if (e.eventType === EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED && child?.workflowId)
            todo.push({ workflowId: child.workflowId, runId: child.runId ?? '' });
        }
      }
    });
    // The shared workflows' events in the phase, by the payment under way.
    const sorted = [...runs].sort((a, b) => a.marks[0]! - b.marks[0]!);
    for (const type of SHARED_TYPES) {
      let nextPageToken: Uint8Array | undefined;
      do {
        const page = await client.workflowService.listWorkflowExecutions({
          namespace: ctx.dev.temporalNamespace,
          query: `WorkflowType = '${type}'`,
          nextPageToken,
        });
        for (const execution of page.executions ?? []) {
          const events =
            (await client.workflow.getHandle(execution.execution?.workflowId ?? '', execution.execution?.runId ?? undefined).fetchHistory()).events ?? [];
          for (const e of events) {
            const t = eventMs(e);
            if (t < window.startMs || t > window.endMs) continue;
            let k = 0;
            while (k + 1 < sorted.length && t >= sorted[k + 1]!.marks[0]!) k++;
            put(stepAt(sorted[k]!.marks, t), type, e);
          }
        }
        nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
      } while (nextPageToken);
    }
  } finally {
    await connection.close();
  }
  const byStep: Record<string, Record<string, TemporalFigures>> = Object.fromEntries(steps.map((s) => [s, {}]));
  for (const [key, events] of buckets) {
    const [step, type] = key.split('\u0000') as [string, string];
    const f = emptyFigures();
    addEvents(f, events);
    byStep[step]![type] = perPayment(f, runs.length);
  }
  p.done();
  const ownByEventType = Object.fromEntries(
    Object.entries(own)
      .sort(([, a], [, b]) => b.bytes - a.bytes)
      .map(([name, f]) => [name, { events: round(f.events / runs.length), bytes: Math.round(f.bytes / runs.length) }]),
  );
  return { sampled: runs.length, byStep, ownByEventType };
}

function perPayment(f: TemporalFigures, n: number): TemporalFigures {
  const r = (v: number) => Math.round((v / n) * 10) / 10;
  return {
    workflowTasks: r(f.workflowTasks),
    activityTasks: r(f.activityTasks),
    localActivities: r(f.localActivities),
    historyEvents: r(f.historyEvents),
    historyBytes: Math.round(f.historyBytes / n),
    memoUpserts: r(f.memoUpserts),
    actions: r(f.actions),
    actionsByKind: Object.fromEntries(Object.entries(f.actionsByKind).map(([k, v]) => [k, r(v)])),
  };
}

async function gasOf(chain: PublicClient, hashes: Hex[]): Promise<GasFigures> {
  const gas = await pool(hashes, 8, async (hash) => Number((await chain.getTransactionReceipt({ hash })).gasUsed));
  return {
    n: gas.length,
    mean: Math.round(gas.reduce((a, b) => a + b, 0) / Math.max(1, gas.length)),
    min: gas.length ? Math.min(...gas) : NaN,
    max: gas.length ? Math.max(...gas) : NaN,
  };
}

async function gasBySteps(chain: PublicClient, hashes: HoldHashes[]): Promise<Record<keyof HoldHashes, GasFigures>> {
  return {
    authorize: await gasOf(
      chain,
      hashes.map((h) => h.authorize),
    ),
    capture1: await gasOf(
      chain,
      hashes.map((h) => h.capture1),
    ),
    capture2: await gasOf(
      chain,
      hashes.map((h) => h.capture2),
    ),
    void: await gasOf(
      chain,
      hashes.map((h) => h.void),
    ),
  };
}

/**
 * Every authcap hold's escrow events, from the chain: exactly PaymentAuthorized 10.00, PaymentCaptured
 * 3.00 and 2.50, PaymentVoided 4.50, in the transactions authcap reported; and the merchant key sent
 * exactly one transaction per escrow call and per plain capture (authcap's and the floor's).
 */
async function auditHolds(
  ctx: HoldContext,
  escrow: Address,
  fromBlock: bigint,
  held: HeldTiming[],
  merchant: { nonceBefore: number; expected: number },
): Promise<HoldResults['audit']> {
  const decimals = ctx.dev.networks[0]!.tokens[0]!.decimals;
  const units = (text: string) => parseUnits(text, decimals);
  const logs = await ctx.chain.getLogs({
    address: escrow,
    events: (['PaymentAuthorized', 'PaymentCaptured', 'PaymentVoided', 'PaymentReclaimed'] as const).map((name) => getAbiItem({ abi: escrowAbi, name })),
    fromBlock,
    toBlock: 'latest',
  });
  const parsed = parseEventLogs({ abi: escrowAbi, logs });
  const byHash = new Map<string, [string, bigint, Hex][]>();
  for (const l of parsed) {
    const args = l.args as { paymentInfoHash: Hex; amount: bigint };
    const key = args.paymentInfoHash.toLowerCase();
    byHash.set(key, [...(byHash.get(key) ?? []), [l.eventName, args.amount, l.transactionHash]]);
  }
  const want = (h: HeldTiming): [string, bigint, Hex][] => [
    ['PaymentAuthorized', units(HOLD.amount), h.hashes.authorize],
    ['PaymentCaptured', units(HOLD.parts[0]), h.hashes.capture1],
    ['PaymentCaptured', units(HOLD.parts[1]), h.hashes.capture2],
    ['PaymentVoided', units(HOLD.rest), h.hashes.void],
  ];
  const show = (events: [string, bigint, Hex][] | undefined) => JSON.stringify((events ?? []).map(([e, a, t]) => [e, a.toString(), t]));
  const holdsWrong = held
    .filter((h) => show(byHash.get(h.paymentInfoHash.toLowerCase())) !== show(want(h)))
    .map((h) => `${h.id}: ${show(byHash.get(h.paymentInfoHash.toLowerCase()))}`);
  const merchantTransactions = (await ctx.chain.getTransactionCount({ address: ctx.dev.merchantAddress, blockTag: 'latest' })) - merchant.nonceBefore;
  return {
    holds: held.length,
    holdsWrong,
    merchantTransactions,
    merchantTransactionsExpected: merchant.expected,
    ok: holdsWrong.length === 0 && merchantTransactions === merchant.expected,
  };
}
