// The facilitator row (`npm run bench -- --only facilitator [--quick]`, and in the full bench on a stack
// of its own): a settle is on the request path of a paid HTTP call, so authcap's /x402/verify +
// /x402/settle over HTTP (test/bench/facilitatorFlows.ts) against baseline B, x402's own `exact`
// facilitator (@x402/evm's ExactEvmScheme) called in process, on the same chain and token:
//   one at a time   N payments each, sign → verify → settle answered; p50 / p95, authcap ÷ B (target p50 ≤ 1.1×)
//   concurrency 50  M payments each, 50 in flight; settled per second, authcap ÷ B (target ≥ 0.5×). B runs
//                   as the library sets it up (one key, the pending nonce fetched per send: what collides
//                   is its throughput), and again with viem's nonce manager on its key
// Then every answer is judged against the chain (facilitatorFlows.ts's judgePayments: a success must be
// this payment's transfer in a mined block, a refusal must have moved nothing), a sample of settled
// payloads is settled again (the same transaction each), and the merchant key's transactions are counted
// against authcap's settled payments. Every payment pays from a payer of its own, minted by the dev
// token's owner. CPU per settled payment from /proc, each process of the stack and the bench's own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createTestClient, http, parseEther, parseUnits, type Address, type Hex, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Stack } from '../../devstack/stack.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { AuthcapApi, type Payer } from './authcapFlows.js';
import { createX402Baseline, type X402Attempt, type X402Baseline } from './baselines/x402Facilitator.js';
import { startBenchStack, stackPids } from './benchStack.js';
import {
  freshPayers,
  judgePayments,
  secondsUntilUnpayable,
  settleOf,
  verifyOf,
  X402Facilitator,
  type PaymentRecord,
  type SettleAnswer,
  type VerifyAnswer,
} from './facilitatorFlows.js';
import { spread } from './lifecycleCost.js';
import { UsageSampler, type UsageByProcess } from './processUsage.js';
import { phase, type Progress } from './progress.js';
import type { FacilitatorProbes, FacilitatorResults, FacilitatorSide, Target } from './results.js';
import { distribution, pool, ratio, round, type Distribution } from './stats.js';
import { registerReceiver, startWebhookReceiver, type WebhookReceiver } from './webhookReceiver.js';

export interface FacilitatorPlan {
  /** Payments one at a time, for authcap and for B each. */
  sequential: number;
  /** [concurrency, payments] for authcap and for each B. */
  concurrent: [number, number];
  /** Settled payloads settled again after the run. */
  resettle: number;
}

/** 0.01 of a 6-decimal token, what the other rows pay. */
const AMOUNT = 10_000n;
const WARM_UP = 2;
/** Payers (or payloads) in each probe. */
const PROBES = 5;
/** The race probe's second settle of a payload leaves i × this after the first (i = 0 … 19). */
const RACE_STEP_MS = 8;
/** What trails a phase (workflows closing, webhook deliveries, B's last polls) lands in this pause, not in the next phase. */
const PAUSE_MS = 3_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The row on a stack of its own (the full bench), with the merchant's webhook endpoint registered as in every row. */
export async function facilitatorRowOnOwnStack(plan: FacilitatorPlan): Promise<FacilitatorResults> {
  const stateDir = mkdtempSync(join(tmpdir(), 'authcap-bench-facilitator-'));
  const receiver = await startWebhookReceiver();
  const stack = await startBenchStack(stateDir);
  try {
    const api = new AuthcapApi(stack.devJson.apiUrls, stack.devJson.apiKey);
    await registerReceiver(api, receiver);
    return await runFacilitatorRow(stack, receiver, plan);
  } finally {
    await stack.stop();
    await receiver.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

export async function runFacilitatorRow(stack: Stack, receiver: WebhookReceiver, plan: FacilitatorPlan): Promise<FacilitatorResults> {
  const dev = stack.devJson;
  if (!dev.tokenOwner) throw new Error('the facilitator row needs the dev token: its owner mints the fresh payers their tokens');
  const chain = createPublicClient({ transport: http(dev.rpcUrl) }) as PublicClient;
  const read = (functionName: 'name' | 'version') => chain.readContract({ address: dev.tokenAddress, abi: tokenAbi, functionName });
  const domain = { name: await read('name'), version: await read('version') };
  const decimals = await chain.readContract({ address: dev.tokenAddress, abi: tokenAbi, functionName: 'decimals' });
  const held = parseUnits('1', decimals);
  const sampler = new UsageSampler(stackPids(stack));
  const deliveriesBefore = receiver.deliveries();
  const authcap = new X402Facilitator({
    apiUrls: dev.apiUrls,
    facilitatorKey: dev.facilitatorApiKey,
    chainId: dev.chainId,
    token: dev.tokenAddress,
    domain,
    payTo: dev.merchantAddress,
  });
  const anvil = createTestClient({ mode: 'anvil', transport: http(dev.rpcUrl) });
  const fundedKey = async () => {
    const key = generatePrivateKey();
    await anvil.setBalance({ address: privateKeyToAccount(key).address, value: parseEther('1000') });
    return key;
  };
  const baseline = async (nonceManager: boolean) =>
    createX402Baseline({
      rpcUrl: dev.rpcUrl,
      chainId: dev.chainId,
      tokenAddress: dev.tokenAddress,
      facilitatorKey: await fundedKey(),
      payTo: privateKeyToAccount(generatePrivateKey()).address,
      nonceManager,
    });
  const b = await baseline(false);
  const bManaged = await baseline(true);

  const [concurrency, m] = plan.concurrent;
  const count = 2 * WARM_UP + 1 + 2 * plan.sequential + 2 * Math.min(10, plan.sequential) + 3 * m + 4 * PROBES;
  let p = phase(`facilitator: minting ${count} fresh payers`, 1);
  const payers = await freshPayers({ chain, rpcUrl: dev.rpcUrl, token: dev.tokenAddress, owner: dev.tokenOwner, count, each: held });
  let next = 0;
  const payer = (): Payer => payers[next++]!;
  p.done(`${count} payers, ${held} each`);

  const merchantNonceBefore = await chain.getTransactionCount({ address: dev.merchantAddress, blockTag: 'latest' });
  const rowStartBlock = await chain.getBlockNumber({ cacheTime: 0 });
  const authcapRecords: PaymentRecord[] = [];
  const bRecords: PaymentRecord[] = [];
  const payAuthcap = async () => {
    const r = await authcap.pay(payer(), AMOUNT, held, chain);
    authcapRecords.push(r);
    return r;
  };
  const payB = async (facilitator: X402Baseline) => {
    const r = recordOf(await facilitator.attempt(payer(), AMOUNT), held);
    bRecords.push(r);
    return r;
  };

  // Warm-up, not measured: authcap's first settle starts its relayer and loads the code; B's first call its clients.
  p = phase('facilitator: warm-up', 2 * WARM_UP + 1);
  for (let i = 0; i < WARM_UP; i++) {
    await payAuthcap();
    p.tick();
    await payB(b);
    p.tick();
  }
  await payB(bManaged);
  p.tick();
  p.done();
  await sleep(PAUSE_MS);

  p = phase('facilitator: B one at a time', plan.sequential);
  const bSeq = await measured(sampler, plan.sequential, 1, p, () => withBlocks(chain, () => payB(b)));
  const bSeqSide = { ...sideOf(bSeq, 'B'), blocks: await blocksOf(chain, bSeq.records) };
  p.done(`settled p50 ${bSeqSide.latency.p50} ms, ${bSeqSide.settled} of ${plan.sequential} settled`);
  await sleep(PAUSE_MS);

  p = phase('facilitator: authcap one at a time', plan.sequential);
  const aSeq = await measured(sampler, plan.sequential, 1, p, () => withBlocks(chain, payAuthcap));
  const aSeqSide = { ...sideOf(aSeq, 'authcap'), blocks: await blocksOf(chain, aSeq.records) };
  p.done(
    `settled p50 ${aSeqSide.latency.p50} ms (verify ${aSeqSide.verify.p50}, settle ${aSeqSide.settle.p50}), ${ratio(aSeqSide.latency.p50, bSeqSide.latency.p50)}× B, ${aSeqSide.settled} of ${plan.sequential} settled`,
  );
  await sleep(PAUSE_MS);

  // Not timed with the rows above: where the settle's time goes before the transfer is sent.
  const diagnosed = Math.min(10, plan.sequential);
  p = phase("facilitator: settle → transfer in the node's pool, one at a time", 2 * diagnosed);
  const sent = {
    baselineB: await sentAfterSettle(chain, b.address, diagnosed, p, () => payB(b)),
    authcap: await sentAfterSettle(chain, dev.merchantAddress, diagnosed, p, payAuthcap),
  };
  p.done(`p50 authcap ${sent.authcap.p50} ms, B ${sent.baselineB.p50} ms`);
  await sleep(PAUSE_MS);

  p = phase(`facilitator: B at concurrency ${concurrency}`, m);
  const bCon = await measured(sampler, m, concurrency, p, () => payB(b));
  const bConSide = sideOf(bCon, 'B');
  p.done(`${bConSide.settledPerSecond} settled/s, ${bConSide.settled} of ${m} settled (${list(bConSide.notSettled)})`);
  await sleep(PAUSE_MS);

  p = phase(`facilitator: B + nonce manager at concurrency ${concurrency}`, m);
  const bmCon = await measured(sampler, m, concurrency, p, () => payB(bManaged));
  const bmConSide = sideOf(bmCon, 'B');
  p.done(`${bmConSide.settledPerSecond} settled/s, ${bmConSide.settled} of ${m} settled (${list(bmConSide.notSettled)})`);
  await sleep(PAUSE_MS);

  p = phase(`facilitator: authcap at concurrency ${concurrency}`, m);
  const aCon = await measured(sampler, m, concurrency, p, payAuthcap);
  const aConSide = sideOf(aCon, 'authcap');
  p.done(
    `${aConSide.settledPerSecond} settled/s (${ratio(aConSide.settledPerSecond, bConSide.settledPerSecond)}× B, ${ratio(aConSide.settledPerSecond, bmConSide.settledPerSecond)}× B with a nonce manager), ${aConSide.settled} of ${m} settled (${list(aConSide.notSettled)}), settle p50 ${aConSide.settle.p50} ms`,
  );

  const merchantNonceAtProbes = await chain.getTransactionCount({ address: dev.merchantAddress, blockTag: 'latest' });
  const probesStartBlock = await chain.getBlockNumber({ cacheTime: 0 });
  p = phase('facilitator: probes (unfunded payers, two payloads for one amount, one payload settled twice at once)', 1);
  const probed = await probes({ authcap, chain, dev, payer, held });
  authcapRecords.push(...probed.records);
  p.done(
    `unfunded: verify ${list(probed.summary.unfunded.verify)}, settle ${list(probed.summary.unfunded.settle)}; one amount, two payloads: ${probed.summary.oneAmountTwoPayloads.oneSettled} of ${PROBES} payers paid once, ${probed.summary.oneAmountTwoPayloads.bothSettled} twice; settled twice at once: ${probed.summary.race.sameTransaction} of ${probed.summary.race.n} the same transaction`,
  );

  // The same payloads settled again: each must answer with the one transaction that paid it.
  const settledBefore = [...aCon.records, ...aSeq.records].filter((r) => r.settle?.success);
  const sample = spread(settledBefore, plan.resettle);
  p = phase('facilitator: settling settled payloads again', sample.length);
  const resettle = { sampled: sample.length, sameTransaction: 0, differentTransaction: 0, otherAnswers: [] as string[] };
  const resettleMs: number[] = [];
  for (const r of sample) {
    const t0 = performance.now();
    const again = await authcap.post<SettleAnswer>('settle', r.body);
    resettleMs.push(performance.now() - t0);
    if (again.answer?.success && again.answer.transaction === r.settle!.transaction) resettle.sameTransaction += 1;
    else if (again.answer?.success) {
      resettle.differentTransaction += 1;
      resettle.otherAnswers.push(`${r.nonce.slice(0, 10)}…: first ${r.settle!.transaction}, again ${again.answer.transaction}`);
    } else resettle.otherAnswers.push(`${r.nonce.slice(0, 10)}…: again ${again.error ?? `${again.answer?.errorReason}: ${again.answer?.errorMessage}`}`);
    p.tick();
  }
  p.done(`${resettle.sameTransaction} of ${sample.length} answered the same transaction, ${resettle.differentTransaction} another`);

  // Refused payments are read once their validBefore has passed: no transfer of theirs can come after.
  const waitedSeconds = Math.ceil(secondsUntilUnpayable(authcapRecords));
  p = phase(`facilitator: judging every answer on the chain${waitedSeconds ? ` (after ${waitedSeconds} s, past the refused ones' validBefore)` : ''}`, 1);
  if (waitedSeconds) await sleep(waitedSeconds * 1000);
  const authcapAudit = await judgePayments(chain, dev.tokenAddress, authcapRecords);
  const bAudit = await judgePayments(chain, dev.tokenAddress, bRecords);
  const merchantNonceAfter = await chain.getTransactionCount({ address: dev.merchantAddress, blockTag: 'latest' });
  const endBlock = await chain.getBlockNumber({ cacheTime: 0 });
  const revertedInRow = await revertedFrom(chain, dev.merchantAddress, rowStartBlock, probesStartBlock);
  const revertedInProbes = await revertedFrom(chain, dev.merchantAddress, probesStartBlock + 1n, endBlock);
  const merchantTransactions = merchantNonceAtProbes - merchantNonceBefore;
  const settledTransactions = (records: PaymentRecord[]) => new Set(records.filter((r) => r.settle?.success).map((r) => r.settle!.transaction)).size;
  const authcapSettled = settledTransactions(authcapRecords.filter((r) => !probed.records.includes(r)));
  const probeSummary: FacilitatorProbes = {
    ...probed.summary,
    merchantTransactions: merchantNonceAfter - merchantNonceAtProbes,
    merchantReverted: revertedInProbes,
    settled: settledTransactions(probed.records),
  };
  const ok =
    authcapAudit.wrong === 0 &&
    authcapAudit.answeredBeforeMined === 0 &&
    resettle.differentTransaction === 0 &&
    resettle.sameTransaction === sample.length &&
    probeSummary.race.differentTransaction === 0 &&
    probeSummary.oneAmountTwoPayloads.bothSettled === 0 &&
    merchantTransactions === authcapSettled &&
    revertedInRow === 0;
  p.done(
    `authcap: ${authcapAudit.wrong} answers wrong of ${authcapAudit.payments} (${authcapAudit.success} success, ${authcapAudit.refused} refused, ${authcapAudit.noAnswer} without an answer), ${authcapAudit.answeredBeforeMined} answered before mined; merchant sent ${merchantTransactions} transactions for ${authcapSettled} settled; B: ${bAudit.wrong} wrong of ${bAudit.payments}`,
  );

  const oneAtATime = {
    authcap: aSeqSide,
    baselineB: bSeqSide,
    sent,
    ratio: { p50: ratio(aSeqSide.latency.p50, bSeqSide.latency.p50), p95: ratio(aSeqSide.latency.p95, bSeqSide.latency.p95) },
  };
  const concurrent = {
    concurrency,
    authcap: aConSide,
    baselineB: bConSide,
    baselineBNonceManager: bmConSide,
    ratio: ratio(aConSide.settledPerSecond, bConSide.settledPerSecond),
    ratioToNonceManager: ratio(aConSide.settledPerSecond, bmConSide.settledPerSecond),
  };
  const audit = {
    authcap: authcapAudit,
    baselineB: bAudit,
    resettle: { ...resettle, latency: distribution(resettleMs) },
    merchantTransactions,
    merchantReverted: revertedInRow,
    authcapSettled,
    waitedSeconds,
    ok,
  };
  return {
    amount: AMOUNT.toString(),
    held: held.toString(),
    oneAtATime,
    concurrent,
    audit,
    probes: probeSummary,
    targets: facilitatorTargets(oneAtATime, concurrent, audit, probeSummary),
    webhookDeliveries: receiver.deliveries() - deliveriesBefore,
  };
}

/** The issue's speed targets, judged on this run's figures. */
function facilitatorTargets(
  one: FacilitatorResults['oneAtATime'],
  con: FacilitatorResults['concurrent'],
  audit: FacilitatorResults['audit'],
  probes: FacilitatorProbes,
): Target[] {
  const twice = audit.resettle.differentTransaction + probes.race.differentTransaction + probes.oneAmountTwoPayloads.bothSettled;
  const wrong = audit.authcap.wrong + audit.authcap.answeredBeforeMined + twice;
  return [
    {
      name: 'x402 settle one at a time, p50 vs x402 facilitator',
      target: '≤ 1.1× B',
      got: `${one.ratio.p50}× (${one.authcap.latency.p50} vs ${one.baselineB.latency.p50} ms; p95 ${one.authcap.latency.p95} vs ${one.baselineB.latency.p95} ms)`,
      met: (one.ratio.p50 ?? Infinity) <= 1.1,
    },
    {
      name: `x402 settles at concurrency ${con.concurrency}, settled/s vs x402 facilitator`,
      target: '≥ 0.5× B',
      got: `${con.ratio}× (${con.authcap.settledPerSecond}/s vs ${con.baselineB.settledPerSecond}/s, B settled ${con.baselineB.settled} of ${con.baselineB.n}; B with a nonce manager ${con.baselineBNonceManager.settledPerSecond}/s: ${con.ratioToNonceManager}×)`,
      met: (con.ratio ?? 0) >= 0.5,
    },
    {
      name: 'x402 settles answered wrongly',
      target: '0',
      got: `${wrong} (${audit.authcap.wrong} contradicted by the chain, ${audit.authcap.answeredBeforeMined} answered before mined, ${twice} answered success twice with different transactions, of ${audit.authcap.payments} payments, probes included)`,
      met: wrong === 0,
    },
  ];
}

interface Measured {
  records: PaymentRecord[];
  seconds: number;
  usage: UsageByProcess;
}

/** `n` payments, `concurrency` at once, with the stack's CPU and the bench process's own over the phase. */
async function measured(sampler: UsageSampler, n: number, concurrency: number, p: Progress, pay: () => Promise<PaymentRecord>): Promise<Measured> {
  sampler.start();
  const cpuBefore = process.cpuUsage();
  const t0 = performance.now();
  const records = await pool(
    Array.from({ length: n }, (_, i) => i),
    concurrency,
    async () => {
      const r = await pay();
      p.tick();
      return r;
    },
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const usage = await sampler.stop();
  const benchMs = (cpu.user + cpu.system) / 1000;
  usage.bench = { cpuMs: Math.round(benchMs), cpuPercent: round((benchMs / (seconds * 1000)) * 100), rssMb: round(process.memoryUsage().rss / 1e6) };
  return { records, seconds, usage };
}

function sideOf({ records, seconds, usage }: Measured, who: 'authcap' | 'B'): FacilitatorSide {
  const settled = records.filter((r) => r.settle?.success);
  const notSettled: Record<string, number> = {};
  const examples: Record<string, string> = {};
  for (const r of records) {
    if (r.settle?.success) continue;
    const key = reasonOf(r);
    notSettled[key] = (notSettled[key] ?? 0) + 1;
    examples[key] ??= (r.settle?.errorMessage ?? r.error ?? '').slice(0, 300);
  }
  const per = Math.max(1, settled.length);
  const cpuMsPerSettled = Object.fromEntries(Object.entries(usage).map(([name, u]) => [name, round(u.cpuMs / per)]));
  const mine = who === 'authcap' ? ['worker', 'api', 'temporal', 'anvil'] : ['bench', 'anvil'];
  return {
    n: records.length,
    settled: settled.length,
    notSettled,
    seconds: round(seconds),
    settledPerSecond: round(settled.length / seconds),
    latency: distribution(settled.map((r) => r.ms)),
    verify: distribution(settled.map((r) => r.verifyMs)),
    settle: distribution(settled.map((r) => r.settleMs)),
    cpuMsPerSettled,
    cpuMsPerSettledTotal: round(mine.reduce((sum, name) => sum + (cpuMsPerSettled[name] ?? 0), 0)),
    pendingAnswers: records.reduce((sum, r) => sum + r.pendingAnswers, 0),
    examples,
  };
}

/**
 * One payment at a time, the sender's pending nonce polled every 5 ms meanwhile: ms from the settle's
 * start (the payment's start plus its sign + verify) to its transfer entering the node's pool.
 */
async function sentAfterSettle(chain: PublicClient, sender: Address, n: number, p: Progress, pay: () => Promise<PaymentRecord>): Promise<Distribution> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const before = await chain.getTransactionCount({ address: sender, blockTag: 'pending' });
    const t0 = performance.now();
    let sentMs: number | undefined;
    let done = false;
    const poll = (async () => {
      while (!done && sentMs === undefined) {
        if ((await chain.getTransactionCount({ address: sender, blockTag: 'pending' })) > before) sentMs = performance.now() - t0;
        else await sleep(5);
      }
    })();
    const r = await pay();
    done = true;
    await poll;
    if (sentMs !== undefined && r.settle?.success) out.push(sentMs - r.verifyMs);
    p.tick();
  }
  return distribution(out);
}

/** Transactions from `from` in blocks [fromBlock, toBlock] that reverted. */
async function revertedFrom(chain: PublicClient, from: Address, fromBlock: bigint, toBlock: bigint): Promise<number> {
  const numbers = Array.from({ length: Math.max(0, Number(toBlock - fromBlock) + 1) }, (_, i) => fromBlock + BigInt(i));
  const hashes = (await pool(numbers, 16, async (blockNumber) => (await chain.getBlock({ blockNumber, includeTransactions: true })).transactions)).flatMap(
    (txs) => txs.filter((tx) => tx.from.toLowerCase() === from.toLowerCase()).map((tx) => tx.hash),
  );
  const statuses = await pool(hashes, 16, async (hash) => (await chain.getTransactionReceipt({ hash })).status);
  return statuses.filter((status) => status !== 'success').length;
}

/** Why a payment was not settled, in a few words: verify's reason, settle's, or the HTTP error. */
function reasonOf(r: PaymentRecord): string {
  const why = r.verify && !r.verify.isValid ? `verify: ${r.verify.invalidReason}` : (r.settle?.errorReason ?? r.error ?? 'no answer');
  return why.length > 90 ? `${why.slice(0, 90)}…` : why;
}

/** One payment, with the head block read before it starts and right after its answer (outside its own timing). */
async function withBlocks(chain: PublicClient, pay: () => Promise<PaymentRecord>): Promise<PaymentRecord> {
  const start = await chain.getBlockNumber({ cacheTime: 0 });
  const r = await pay();
  r.blocks = { start, answered: await chain.getBlockNumber({ cacheTime: 0 }) };
  return r;
}

/** Settled payments by blocks from the start to the transfer's block, and from it to the answer. */
async function blocksOf(chain: PublicClient, records: PaymentRecord[]): Promise<NonNullable<FacilitatorSide['blocks']>> {
  const toInclusion: Record<string, number> = {};
  const afterInclusion: Record<string, number> = {};
  for (const r of records) {
    if (!r.settle?.success || !r.blocks) continue;
    const receipt = await chain.getTransactionReceipt({ hash: r.settle.transaction as Hex }).catch(() => undefined);
    if (!receipt) continue;
    const to = String(receipt.blockNumber - r.blocks.start);
    const after = String(r.blocks.answered - receipt.blockNumber);
    toInclusion[to] = (toInclusion[to] ?? 0) + 1;
    afterInclusion[after] = (afterInclusion[after] ?? 0) + 1;
  }
  return { toInclusion, afterInclusion };
}

/**
 * Payments made to be refused or raced, where an answer can go wrong: payers holding nothing (verify,
 * then settle sent anyway); payers holding one amount with two payloads, both verified, then settled at
 * once; one payload settled twice at once (the second 0–152 ms after the first). Their validBefore is 20 s out, so the audit reads their
 * refusals soon after. Each settle answer is a record of its own, judged with the rest.
 */
async function probes(ctx: {
  authcap: X402Facilitator;
  chain: PublicClient;
  dev: Stack['devJson'];
  payer: () => Payer;
  held: bigint;
}): Promise<{ records: PaymentRecord[]; summary: Omit<FacilitatorProbes, 'merchantTransactions' | 'merchantReverted' | 'settled'> }> {
  const { authcap, chain, dev } = ctx;
  const records: PaymentRecord[] = [];
  const count = (into: Record<string, number>, key: string) => {
    into[key] = (into[key] ?? 0) + 1;
  };
  const signed = async (payer: Payer, held: bigint) => {
    const r = authcap.recordOf(payer, AMOUNT, held, await authcap.sign(payer, AMOUNT, 20));
    records.push(r);
    return r;
  };
  const verify = async (r: PaymentRecord) => {
    const v = await authcap.post<VerifyAnswer>('verify', r.body);
    if (v.answer) r.verify = verifyOf(v.answer);
    else r.error = v.error;
    return v.answer ? (v.answer.isValid ? 'valid' : `${v.answer.invalidReason}`) : `${v.error}`;
  };
  const settle = async (r: PaymentRecord) => {
    const s = await authcap.post<SettleAnswer>('settle', r.body);
    if (s.answer) r.settle = settleOf(s.answer);
    else r.error = s.error;
    return s.answer;
  };
  const said = (a: SettleAnswer | undefined) => (a ? (a.success ? 'success' : `${a.errorReason}`) : 'no answer');
  const saidFully = (a: SettleAnswer | undefined) => `${said(a)}${a?.errorMessage ? ` (${a.errorMessage})` : ''}`;

  const unfunded = { n: PROBES, verify: {} as Record<string, number>, settle: {} as Record<string, number> };
  await Promise.all(
    Array.from({ length: PROBES }, async () => {
      const key = generatePrivateKey();
      const r = await signed({ address: privateKeyToAccount(key).address, privateKey: key }, 0n);
      count(unfunded.verify, await verify(r));
      count(unfunded.settle, said(await settle(r)));
    }),
  );

  const exact = await freshPayers({ chain, rpcUrl: dev.rpcUrl, token: dev.tokenAddress, owner: dev.tokenOwner!, count: PROBES, each: AMOUNT });
  const two = { payers: PROBES, oneSettled: 0, bothSettled: 0, noneSettled: 0, answers: {} as Record<string, number> };
  await Promise.all(
    exact.map(async (payer) => {
      const pair = [await signed(payer, AMOUNT), await signed(payer, AMOUNT)];
      for (const r of pair) count(two.answers, `verify ${await verify(r)}`);
      const answers = await Promise.all(pair.map(settle));
      for (const a of answers) count(two.answers, `settle ${said(a)}`);
      const settled = answers.filter((a) => a?.success).length;
      if (settled === 1) two.oneSettled += 1;
      else if (settled === 2) two.bothSettled += 1;
      else two.noneSettled += 1;
    }),
  );

  const race: FacilitatorProbes['race'] = { n: 4 * PROBES, sameTransaction: 0, differentTransaction: 0, otherAnswers: [] };
  await Promise.all(
    Array.from({ length: race.n }, async (_, i) => {
      const first = await signed(ctx.payer(), ctx.held);
      await verify(first);
      // The second settle of the same payload is a record of its own (one nonce: it pays once). It
      // leaves 0, 8, 16 … ms after the first: into each moment of the first one's start.
      const second: PaymentRecord = { ...first };
      records.push(second);
      const [a, b] = await Promise.all([settle(first), sleep(i * RACE_STEP_MS).then(() => settle(second))]);
      if (a?.success && b?.success && a.transaction === b.transaction) return void (race.sameTransaction += 1);
      if (a?.success && b?.success) {
        race.differentTransaction += 1;
        race.otherAnswers.push(`${first.nonce.slice(0, 10)}…: ${a.transaction} and ${b.transaction}`);
      } else race.otherAnswers.push(`${first.nonce.slice(0, 10)}…: ${saidFully(a)} and ${saidFully(b)}`);
      race.example ??= { request: first.body, answers: [a ?? first.error, b ?? second.error] };
    }),
  );
  return { records, summary: { unfunded, oneAmountTwoPayloads: two, race } };
}

/** Baseline B's attempt as the row records every payment. */
function recordOf(a: X402Attempt, held: bigint): PaymentRecord {
  return {
    payer: a.payer,
    payTo: a.payTo as Address,
    nonce: a.nonce,
    amount: a.amount,
    held,
    validBefore: a.validBefore,
    verify: a.verify,
    ...(a.settle ? { settle: a.settle } : {}),
    pendingAnswers: 0,
    ...(a.error ? { error: a.error } : {}),
    verifyMs: a.verifyMs,
    settleMs: a.settleMs,
    ms: a.ms,
  };
}

const list = (record: Record<string, number>) =>
  Object.entries(record)
    .map(([k, v]) => `${k} ×${v}`)
    .join(', ') || 'none other';
