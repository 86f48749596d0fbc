// Refunds and partial captures against their floor, in the configuration `npm start` runs.
//   floor      a bare viem script: the merchant-like key sends the token's plain transfer(payer,
//              amount), polls every 20 ms for the receipt and the depth (test/bench/baselines/bareTransfer.ts)
//   authcap    POST /v1/authorizations/{id}/refunds {amount} on captured authorizations (captured
//              first, not timed), one at a time and at concurrency, with the API's own wait (a 201 is
//              final; after a 202 the caller reads GET /v1/refunds/{id} every 250 ms)
//   partial    POST …/capture {amount} (less than authorized) → captured, against baseline A's
//              capture then the floor's transfer, back to back
// Cost per refund follows test/bench/lifecycleCost.ts: CPU from /proc over the phase ÷ refunds, Temporal
// summed over the refunds workflow and its share of the merchant relayer. Reads of
// the same authorizations stored, captured and refunded say what a merchant who never refunds pays.
import { createWalletClient, http, parseUnits, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { parseAmount } from '../../domain/amount.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { createTransferBaseline, type BareTransferBaseline } from './baselines/bareTransfer.js';
import { phase } from './progress.js';
import type { AuditedRefund } from './refundAudit.js';
import { REFUND_AMOUNT, audited, refundRow, withCost, type RefundContext } from './refundRow.js';
import type { RefundResults } from './results.js';
import { distribution, perUnit, pool, ratio, total } from './stats.js';
import { scrapeServerCounters, serverCallsPerLifecycle } from './temporalServerCalls.js';
import { rpcCallsByMethod } from './workerCounters.js';

/** A partial capture keeps this much of 0.01; the rest goes back as its release. */
const PARTIAL_KEEP = '0.006';

export interface RefundPlan {
  sequential: number;
  partial: number;
  /** [concurrency, refunds] */
  concurrent: [number, number];
}

const round = (v: number) => Math.round(v * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const COUNTERS_SETTLE_MS = 1_500;

/** Runs every refund row; returns the figures, the captures made (for the audit) and every refund paid. */
export async function runRefundRows(ctx: RefundContext, plan: RefundPlan): Promise<{ results: RefundResults; captureHashes: Hex[]; refunds: AuditedRefund[] }> {
  const captureHashes: Hex[] = [];
  const refunds: AuditedRefund[] = [];
  const amountMinor = parseAmount(REFUND_AMOUNT);
  const floor = await transferFloor(ctx);

  // The floor, one at a time.
  let p = phase('refund floor: bare transfer, one at a time', plan.sequential);
  const floorBefore = floor.rpcCalls();
  const floorRuns = [];
  for (let i = 0; i < plan.sequential; i++) {
    floorRuns.push(await floor.transfer(ctx.payerAt(i).address, amountMinor));
    p.tick();
  }
  const floorRpc = perUnit(floorBefore, floor.rpcCalls(), plan.sequential);
  const floorOne = {
    included: distribution(floorRuns.map((r) => r.includedMs)),
    settled: distribution(floorRuns.map((r) => r.settledMs)),
    rpc: { byMethod: floorRpc, total: total(floorRpc) },
  };
  p.done(`settled p50 ${floorOne.settled.p50} ms, ${floorOne.rpc.total} node calls each`);

  // Captured authorizations to refund (not timed).
  p = phase('refunds: capturing authorizations to refund', plan.sequential);
  const storedIds = await stored(ctx, plan.sequential, 'bench-refund');
  captureHashes.push(...(await captureAll(ctx, storedIds)));
  p.done();

  p = phase('authcap refunds, one at a time', plan.sequential);
  const rpcBefore = await rpcCallsByMethod(ctx.metricsUrl);
  const sequential = await refundRow(ctx, storedIds, 1, { transfersPerSecond: round(1000 / floorOne.settled.mean), settled: floorOne.settled }, p);
  const rpcByMethod = perUnit(rpcBefore, await rpcCallsByMethod(ctx.metricsUrl), plan.sequential);
  refunds.push(...sequential.refunds);
  p.done(`succeeded p50 ${sequential.row.succeeded.p50} ms (${sequential.row.ratioToFloor.p50}× the floor), ${total(rpcByMethod)} node calls each`);
  await withCost(ctx, sequential, storedIds);

  // At concurrency: the floor's transfers, then refunds of as many captured authorizations.
  const [c, n] = plan.concurrent;
  p = phase(`refunds at concurrency ${c}: floor, then capturing`, n);
  const t0 = performance.now();
  const concurrentFloor = await pool(
    Array.from({ length: n }, (_, i) => i),
    c,
    (i) => floor.transfer(ctx.payerAt(i).address, amountMinor),
  );
  const floorAtC = { transfersPerSecond: round(n / ((performance.now() - t0) / 1000)), settled: distribution(concurrentFloor.map((r) => r.settledMs)) };
  const concurrentIds = await stored(ctx, n, `bench-refund-c${c}`);
  captureHashes.push(...(await captureAll(ctx, concurrentIds)));
  p.done();
  p = phase(`authcap refunds at concurrency ${c}`, n);
  const concurrent = await refundRow(ctx, concurrentIds, c, floorAtC, p);
  refunds.push(...concurrent.refunds);
  p.done(`${concurrent.row.refundsPerSecond} refunds/s (floor ${floorAtC.transfersPerSecond}/s), p50 ${concurrent.row.succeeded.p50} ms`);
  await withCost(ctx, concurrent, concurrentIds);

  // Partial captures one at a time, against a capture then a transfer.
  p = phase('partial capture: floor (capture, then transfer)', plan.partial);
  const partialFloor: number[] = [];
  for (let i = 0; i < plan.partial; i++) {
    const s = performance.now();
    await ctx.bare.capture(ctx.payerAt(i), 10_000n);
    await floor.transfer(ctx.payerAt(i).address, 10_000n - parseAmount(PARTIAL_KEEP));
    partialFloor.push(performance.now() - s);
    p.tick();
  }
  p.done();
  const partialIds = await stored(ctx, plan.partial, 'bench-partial');
  p = phase('authcap partial captures, one at a time', plan.partial);
  const partialMs: number[] = [];
  for (const id of partialIds) {
    const captured = await ctx.api.capture(id, PARTIAL_KEEP);
    partialMs.push(captured.ms);
    captureHashes.push(captured.body.capture.transactionHash);
    const release = (await ctx.api.call('GET', `/v1/authorizations/${id}/refunds`)).body.data?.[0];
    if (release?.state !== 'succeeded') throw new Error(`partial capture ${id}: release ${JSON.stringify(release)}`);
    refunds.push(audited(release, captured.body.authorization.from));
    p.tick();
  }
  const partial = { captured: distribution(partialMs), floor: distribution(partialFloor) };
  p.done(`captured p50 ${partial.captured.p50} ms (floor ${partial.floor.p50} ms)`);

  // Reads on a quiet stack: stored (voided after), captured and never refunded (the partial captures:
  // their release is the authorization's own), captured and refunded.
  p = phase('reads: stored, captured, refunded', 1);
  const readIds = { stored: await stored(ctx, plan.partial, 'bench-read'), captured: partialIds, refunded: storedIds };
  const readFigures = await reads(ctx, readIds);
  await pool(readIds.stored, 10, (id) => ctx.api.call('POST', `/v1/authorizations/${id}/void`, { reason: 'bench: read only' }));
  p.done(
    `GET p50 stored ${readFigures.stored.latency.p50} ms, captured ${readFigures.captured.latency.p50} ms, refunded ${readFigures.refunded.latency.p50} ms`,
  );

  const gasOf = async (hashes: Hex[]) =>
    Math.round(
      (await Promise.all(hashes.map((hash) => ctx.chain.getTransactionReceipt({ hash })))).reduce((sum, r) => sum + Number(r.gasUsed), 0) /
        Math.max(1, hashes.length),
    );
  return {
    results: {
      amount: REFUND_AMOUNT,
      floor: floorOne,
      rows: [sequential.row, concurrent.row],
      rpcPerRefund: { byMethod: rpcByMethod, total: total(rpcByMethod) },
      gasUsed: {
        transfer: await gasOf(floorRuns.map((r) => r.transactionHash)),
        transferWithAuthorization: await gasOf(sequential.refunds.map((r) => r.transactionHash)),
        receiveWithAuthorization: await gasOf(captureHashes.slice(0, plan.sequential)),
      },
      partialCapture: {
        n: plan.partial,
        kept: PARTIAL_KEEP,
        ...partial,
        ratio: { p50: ratio(partial.captured.p50, partial.floor.p50), p95: ratio(partial.captured.p95, partial.floor.p95) },
      },
      reads: readFigures,
    },
    captureHashes,
    refunds,
  };
}

/** Authorizations created and signed (stored) at concurrency 10: not timed. */
async function stored(ctx: RefundContext, n: number, label: string): Promise<string[]> {
  return pool(
    Array.from({ length: n }, (_, i) => i),
    10,
    async (i) => {
      const created = await ctx.api.create(ctx.payerAt(i), label);
      await ctx.api.store(ctx.payerAt(i), created);
      return created.id;
    },
  );
}

async function captureAll(ctx: RefundContext, ids: string[]): Promise<Hex[]> {
  return pool(ids, 10, async (id) => (await ctx.api.capture(id)).body.capture.transactionHash as Hex);
}

type ReadKind = 'stored' | 'captured' | 'refunded';

/**
 * Temporal describes per read, each kind's authorizations read once in a block of its own (the
 * server's counters before and after); then latency, the kinds interleaved over four rounds, so
 * whatever else the machine does lands on each alike.
 */
async function reads(ctx: RefundContext, ids: Record<ReadKind, string[]>): Promise<RefundResults['reads']> {
  const get = async (id: string) => {
    const res = await ctx.api.call('GET', `/v1/authorizations/${id}`);
    if (res.status !== 200) throw new Error(`GET ${id} answered ${res.status}`);
    return res.ms;
  };
  const kinds = Object.keys(ids) as ReadKind[];
  const describes = {} as Record<ReadKind, number>;
  for (const kind of kinds) {
    // The server's counters reach its /metrics on a reporting interval: let what came before settle in.
    await sleep(COUNTERS_SETTLE_MS);
    const before = await scrapeServerCounters(ctx.temporalMetricsUrl, ctx.dev.temporalNamespace);
    for (const id of ids[kind]) await get(id);
    await sleep(COUNTERS_SETTLE_MS);
    const after = await scrapeServerCounters(ctx.temporalMetricsUrl, ctx.dev.temporalNamespace);
    describes[kind] = serverCallsPerLifecycle(before, after, ids[kind].length, 50).frontend.DescribeWorkflowExecution ?? 0;
  }
  const ms = Object.fromEntries(kinds.map((k) => [k, [] as number[]])) as Record<ReadKind, number[]>;
  const most = Math.max(...kinds.map((k) => ids[k].length));
  for (let i = 0; i < 4 * most; i++) for (const kind of kinds) ms[kind].push(await get(ids[kind][i % ids[kind].length]!));
  return Object.fromEntries(kinds.map((k) => [k, { latency: distribution(ms[k]), describesPerRead: describes[k] }])) as RefundResults['reads'];
}

/** The floor's key, holding the token: the dev token's owner mints it some (not timed). */
async function transferFloor(ctx: RefundContext): Promise<BareTransferBaseline> {
  const { dev } = ctx;
  if (!dev.tokenOwner) throw new Error('the refund floor needs the dev token (its owner mints the floor key tokens)');
  const floor = createTransferBaseline({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, tokenAddress: dev.tokenAddress, senderKey: ctx.floorKey, confirmations: 1 });
  const owner = createWalletClient({ transport: http(dev.rpcUrl), account: privateKeyToAccount(dev.tokenOwner.privateKey) });
  const hash = await owner.writeContract({
    chain: null,
    address: dev.tokenAddress,
    abi: tokenAbi,
    functionName: 'mint',
    args: [floor.address, parseUnits('1000', 6)],
  });
  await ctx.chain.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  return floor;
}
