// The facilitator row's part of a report (test/bench/facilitatorRow.ts): authcap's /x402/verify +
// /x402/settle over HTTP against x402's own facilitator in process, one at a time and at concurrency 50,
// every answer judged on the chain; and the files a `--only facilitator` run writes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markdownTable } from 'markdown-table';
import type { AnswerAudit } from './facilitatorFlows.js';
import type { FacilitatorResults, FacilitatorSide } from './results.js';

const d = (x: { p50: number; p95: number; p99: number }) => (Number.isFinite(x.p50) ? `${x.p50} / ${x.p95} / ${x.p99}` : '—');
const list = (record: Record<string, number>) =>
  Object.entries(record)
    .map(([k, v]) => `${k} ×${v}`)
    .join('; ') || '—';
const cpu = (s: FacilitatorSide, names: string[]) => `${names.map((n) => s.cpuMsPerSettled[n] ?? '—').join(' / ')} (${s.cpuMsPerSettledTotal})`;
const AUTHCAP_CPU = ['worker', 'api', 'temporal', 'anvil'];
const B_CPU = ['bench', 'anvil'];

export function facilitatorMarkdown(r: FacilitatorResults): string {
  const one = r.oneAtATime;
  const con = r.concurrent;
  const a = r.audit;
  const row = (who: string, s: FacilitatorSide, cpuNames: string[], ratioCell: string) => [
    who,
    `${s.settled} of ${s.n}`,
    String(s.settledPerSecond),
    d(s.latency),
    d(s.verify),
    d(s.settle),
    ratioCell,
    cpu(s, cpuNames),
  ];
  const head = [
    '',
    'settled',
    'settled/s',
    'whole ms p50 / p95 / p99',
    'sign + verify ms',
    'settle ms',
    'authcap ÷ B',
    'CPU ms per settled (authcap: worker / API / Temporal / anvil; B: bench process / anvil)',
  ];
  const auditLine = (who: string, x: AnswerAudit) =>
    `${who}: ${x.payments} payments, ${x.success} answered success, ${x.refused} refused, ${x.noAnswer} without a final answer (of those, paid on the chain ${x.noAnswerPaid}, unpaid ${x.noAnswerUnpaid}); **${x.wrong} answered wrongly**${x.wrongExamples.length ? ` (${x.wrongExamples.join('; ')})` : ''}; ${x.answeredBeforeMined} success answers whose transaction had no receipt right after the answer.`;
  const lines = [
    `**x402 facilitator** (each payment: a payer of its own, minted ${r.held}, signs a TransferWithAuthorization of ${r.amount} (validAfter 0, validBefore now + 60 s, a random nonce); authcap: POST /x402/verify then /x402/settle over HTTP with the facilitator key, as @x402/core's HTTPFacilitatorClient sends them, a \`settlement_pending\` settled once more as its resource server does; B: x402's \`exact\` facilitator (@x402/evm ExactEvmScheme) in process, verify() then settle() to the receipt, polling at 20 ms. Whole: from before the signature to the settle's answer; both answer once the transfer is in a block, 1 confirmation)`,
    '',
    markdownTable([
      head,
      row('B one at a time', one.baselineB, B_CPU, ''),
      row('authcap one at a time', one.authcap, AUTHCAP_CPU, `p50 ${one.ratio.p50}×, p95 ${one.ratio.p95}×`),
      row(`B at concurrency ${con.concurrency} (one key, nonce per send)`, con.baselineB, B_CPU, ''),
      row(`B at concurrency ${con.concurrency}, viem nonce manager`, con.baselineBNonceManager, B_CPU, ''),
      row(`authcap at concurrency ${con.concurrency}`, con.authcap, AUTHCAP_CPU, `${con.ratio}× B, ${con.ratioToNonceManager}× B with a nonce manager`),
    ]),
    '',
    `Not settled: B one at a time ${list(one.baselineB.notSettled)}; authcap one at a time ${list(one.authcap.notSettled)}; B at concurrency ${con.concurrency} ${list(con.baselineB.notSettled)}; B with a nonce manager ${list(con.baselineBNonceManager.notSettled)}; authcap at concurrency ${con.concurrency} ${list(con.authcap.notSettled)}. authcap's \`settlement_pending\` answers settled again: ${one.authcap.pendingAnswers} one at a time, ${con.authcap.pendingAnswers} at concurrency ${con.concurrency}.`,
    '',
    `One at a time, in blocks (0.2 s): from the head before the signature to the transfer's block, and from it to the head at the answer (payments by blocks): authcap ${blocks(one.authcap)}; B ${blocks(one.baselineB)}. B answers on the receipt (the transfer's block); authcap once the block has 1 confirmation built on it (the network's \`confirmations\`, at least 1). From the settle's start to the transfer in the node's pool (${one.sent.authcap.n} more payments each, not in the table, the sender's pending nonce polled every 5 ms), ms p50 / p95 / p99: authcap ${d(one.sent.authcap)}, B ${d(one.sent.baselineB)}.`,
    '',
    ...examples(r),
    `The bench process's own CPU per settled authcap payment (the payers' signatures and the HTTP client, not authcap's): ${one.authcap.cpuMsPerSettled.bench ?? '—'} ms one at a time, ${con.authcap.cpuMsPerSettled.bench ?? '—'} ms at concurrency ${con.concurrency}.`,
    '',
    `Answers judged on the chain after the run (a success: its transaction mined and successful, holding this payment's Transfer(payer → payTo, amount) and AuthorizationUsed(payer, nonce) from the token, the payer left with ${r.held} − ${r.amount}; a refusal: the nonce unused and the payer's balance untouched, read after its validBefore${a.waitedSeconds ? `, ${a.waitedSeconds} s after the last phase` : ''}; B's refusals read at once, their validBefore being 600 s out):`,
    '',
    `- ${auditLine('authcap (warm-up included)', a.authcap)}`,
    `- ${auditLine('B (warm-up included)', a.baselineB)}`,
    `- Probes (validBefore 20 s out, each answer judged above with the rest): ${r.probes.unfunded.n} payers holding nothing: verify ${list(r.probes.unfunded.verify)}, settle sent anyway ${list(r.probes.unfunded.settle)}. ${r.probes.oneAmountTwoPayloads.payers} payers holding one amount, two payloads each verified then settled at once: ${r.probes.oneAmountTwoPayloads.oneSettled} paid once, **${r.probes.oneAmountTwoPayloads.bothSettled} twice**, ${r.probes.oneAmountTwoPayloads.noneSettled} not at all (${list(r.probes.oneAmountTwoPayloads.answers)}). ${r.probes.race.n} payloads settled twice at once (the second 0, 8, … ms after the first): ${r.probes.race.sameTransaction} answered the one transaction twice, **${r.probes.race.differentTransaction} two different ones**${r.probes.race.otherAnswers.length ? ` (${r.probes.race.otherAnswers.join('; ')})` : ''}. The merchant key sent ${r.probes.merchantTransactions} transactions for the probes' ${r.probes.settled} settled payments, ${r.probes.merchantReverted} of them reverted.`,
    `- Settled again: ${a.resettle.sampled} settled authcap payloads, ${a.resettle.sameTransaction} answered the same transaction, ${a.resettle.differentTransaction} another${a.resettle.otherAnswers.length ? ` (${a.resettle.otherAnswers.join('; ')})` : ''}; ms ${d(a.resettle.latency)}.`,
    `- The merchant key sent ${a.merchantTransactions} transactions over the timed phases for their ${a.authcapSettled} distinct settled transactions: ${a.merchantTransactions === a.authcapSettled ? 'one each' : '**not one each**'}; ${a.merchantReverted} reverted.`,
    `- Audit: ${a.ok ? 'passed' : '**FAILED**'}. Webhook deliveries received over the row: ${r.webhookDeliveries}.`,
    '',
    markdownTable([['target', 'wanted', 'got', 'met'], ...r.targets.map((t) => [t.name, t.target, t.got, t.met ? 'yes' : '**no**'])]),
    '',
    ...(r.probes.race.example
      ? [
          'The first payload settled twice at once that did not answer the one transaction twice: the request (POST /x402/settle, sent twice at once) and both answers:',
          '',
          '```json',
          JSON.stringify(r.probes.race.example, null, 2),
          '```',
          '',
        ]
      : []),
  ];
  return lines.join('\n');
}

/** Settled payments by number of blocks, e.g. `2 blocks ×18, 3 blocks ×2 → included; then 1 block ×20`. */
function blocks(s: FacilitatorSide): string {
  if (!s.blocks) return '—';
  const by = (r: Record<string, number>) =>
    Object.entries(r)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([k, v]) => `${k} ×${v}`)
      .join(', ');
  return `${by(s.blocks.toInclusion)} to inclusion, then ${by(s.blocks.afterInclusion)} to the answer`;
}

/** The facilitators' own words for each reason a payment was not settled. */
function examples(r: FacilitatorResults): string[] {
  const sides: [string, FacilitatorSide][] = [
    ['B one at a time', r.oneAtATime.baselineB],
    ['authcap one at a time', r.oneAtATime.authcap],
    ['B at concurrency', r.concurrent.baselineB],
    ['B with a nonce manager', r.concurrent.baselineBNonceManager],
    ['authcap at concurrency', r.concurrent.authcap],
  ];
  const lines = sides.flatMap(([who, s]) =>
    Object.entries(s.examples ?? {})
      .filter(([, message]) => message)
      .map(([reason, message]) => `- ${who}, ${reason}: "${message}"`),
  );
  return lines.length ? ['What the facilitators said of the payments they did not settle (one message per reason):', '', ...lines, ''] : [];
}

/** A facilitator-only run (`--only facilitator`): what ran where, and the row. */
export interface FacilitatorRun {
  startedAt: string;
  durationSeconds: number;
  command: string;
  machine: { cpus: number; model: string; memoryGb: number; node: string; platform: string };
  configuration: string;
  /** The machine's load average (1, 5, 15 min) at the start and the end: other work on it shows here. */
  loadAverage: { start: number[]; end: number[] };
  facilitator: FacilitatorResults;
}

/** Writes latest-facilitator-<kind>.json and .md under test/bench/results/, or under BENCH_OUT_DIR when set. */
export function writeFacilitatorResults(run: FacilitatorRun, kind: string): string[] {
  const dir = process.env.BENCH_OUT_DIR || fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const md = [
    `Run ${run.startedAt} (\`${run.command}\`, ${run.durationSeconds} s) on ${run.machine.cpus} × ${run.machine.model}, ${run.machine.memoryGb} GB, Node ${run.machine.node}; load average ${run.loadAverage.start.join(' ')} at the start, ${run.loadAverage.end.join(' ')} at the end.`,
    `Configuration: ${run.configuration}.`,
    '',
    facilitatorMarkdown(run.facilitator),
  ].join('\n');
  const files: [string, string][] = [
    [join(dir, `latest-facilitator-${kind}.json`), `${JSON.stringify(run, null, 2)}\n`],
    [join(dir, `latest-facilitator-${kind}.md`), md],
  ];
  for (const [path, text] of files) writeFileSync(path, text);
  return files.map(([path]) => path);
}
