// The audit every fault case ends with: what the chain proves against what authcap says.
//   lost          an authorization whose state disagrees with the chain (captured without a log, or a
//                 log for a nonce authcap does not call captured/canceled); money that disagrees: the
//                 merchant's balance against Σ(amountCaptured − amountRefunded), a payer's change
//                 against the same sum for its authorizations, an authorization's own capture minus
//                 its refunds onchain against its amountCaptured − amountRefunded, a succeeded refund
//                 without its one Transfer of its amount, a failed refund that moved money, money out
//                 of the merchant that no refund explains
//   capturedTwice more than one AuthorizationUsed / AuthorizationCanceled log for one nonce, or two
//                 captures paid out for one authorization; a refund sent twice (two logs for its
//                 nonce, one Idempotency-Key answered with two refunds, a refund nobody was answered
//                 with), or refunds that passed what was captured
//   stuck         not in a final state although its deadline passed (with a grace period), or a
//                 refund (a partial capture's release included) still pending after the grace period
//   nonceGaps     the merchant's pending and latest transaction counts still differ after the wait,
//                 or merchant transactions beyond the captures and cancellations it made
//
// Refunds are the merchant key's own EIP-3009 transferWithAuthorization under a nonce derived from
// the refund's place: each emits AuthorizationUsed(merchant, nonce) and right after it, in the same
// transaction, Transfer(merchant → payer). The token emits a capture's the same way
// (AuthorizationUsed(payer, nonce), then Transfer(payer → merchant)), so each Transfer is paired with
// the AuthorizationUsed log just before it.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { encodeEventTopics, parseEventLogs, type Address, type Hex } from 'viem';
import { refundNonce } from '../../activities/refund.js';
import { formatAmount, parseAmount } from '../../domain/amount.js';
import type { AuthorizationResource } from '../../domain/authorization.js';
import { AuthcapError } from '../../domain/errors.js';
import { parseResourceId } from '../../domain/ids.js';
import { MAX_REFUNDS_PER_AUTHORIZATION, PARTIAL_CAPTURE_REASON, parseRefundId, type Refund } from '../../domain/refunds.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import type { World } from './harness.js';
import { eventually } from './harness.js';

export interface AuditCounts {
  audited: number;
  lost: number;
  capturedTwice: number;
  stuck: number;
  nonceGaps: number;
}

export const RESULTS_DIR = join(tmpdir(), 'authcap-faults-results');

/** Minor units of an API amount ("0" included, which parseAmount refuses). */
const minor = (amount: string | undefined | null): bigint => (!amount || amount === '0' ? 0n : parseAmount(amount));

export interface AuditOptions {
  caseName: string;
  merchantTxBefore: number;
  expectedExtraTx?: number;
  expectedExtraValue?: bigint;
  /** How long refunds still pending may take to end before they count as stuck (default 90 s). */
  refundGraceMs?: number;
  /**
   * What callers were answered, per Idempotency-Key: the refund ids its 201/202 answers named. One key
   * answered with two refunds, or a refund of an audited authorization nobody was answered with, is a
   * refund made twice. Without it those two checks are skipped.
   */
  refundAnswers?: Map<string, string[]>;
}

export async function audit(world: World, ids: string[], options: AuditOptions): Promise<AuditCounts & { details: string[] }> {
  const details: string[] = [];
  const counts: AuditCounts = { audited: ids.length, lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 };
  const used = encodeEventTopics({ abi: tokenAbi, eventName: 'AuthorizationUsed' })[0];
  const canceled = encodeEventTopics({ abi: tokenAbi, eventName: 'AuthorizationCanceled' })[0];
  let unavailable = 0;
  // A read the server could not answer within the client's 3 s bound is a 503 a merchant retries
  // after its Retry-After; the audit does the same (bounded), and says how often it had to.
  const retried = async <T>(call: () => Promise<T>): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        if (!(err instanceof AuthcapError && err.code === 'temporal_unavailable') || attempt === 5) throw err;
        unavailable += 1;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  };
  const read = (id: string) => retried(() => world.client.authorizations.get(id));
  const readRefunds = (id: string) => retried(() => world.client.refunds.list(id));
  const mayHaveRefunds = (a: AuthorizationResource) => a.state === 'captured' || a.state === 'capturing';

  // Refunds still in flight end first (bounded): money is compared once nothing moves any more.
  const graceEnds = Date.now() + (options.refundGraceMs ?? 90_000);
  let refundsPending = 0;
  for (const id of ids) {
    const a = await read(id).catch(() => undefined);
    if (!a || !mayHaveRefunds(a)) continue;
    const refunds = await eventually(
      () => readRefunds(id),
      (list) => list.every((r) => r.state !== 'pending'),
      Math.max(0, graceEnds - Date.now()),
    );
    if (refunds?.some((r) => r.state === 'pending')) refundsPending += 1;
  }

  const logs = await world.publicClient.getLogs({ address: world.tokenAddress, fromBlock: 0n, toBlock: 'latest' });
  const byNonce = new Map<string, { used: number; canceled: number }>();
  for (const log of logs) {
    if (log.topics[0] !== used && log.topics[0] !== canceled) continue;
    const key = `${log.topics[1]!.slice(26).toLowerCase()}:${log.topics[2]!.toLowerCase()}`;
    const entry = byNonce.get(key) ?? { used: 0, canceled: 0 };
    if (log.topics[0] === used) entry.used += 1;
    else entry.canceled += 1;
    byNonce.set(key, entry);
  }
  // Every token movement, and each AuthorizationUsed with the Transfer it caused (the next log).
  const transfers = parseEventLogs({ abi: tokenAbi, logs, eventName: 'Transfer' }).map((l) => ({
    from: l.args.from.toLowerCase(),
    to: l.args.to.toLowerCase(),
    value: l.args.value,
    blockNumber: l.blockNumber,
    transactionHash: l.transactionHash,
    logIndex: l.logIndex,
  }));
  const transferAt = new Map(transfers.map((t) => [`${t.transactionHash}:${t.logIndex}`, t]));
  const movedBy = new Map<string, (typeof transfers)[number][]>();
  const nonceOf = new Map<(typeof transfers)[number], string>();
  const explained = new Set<(typeof transfers)[number]>();
  for (const l of parseEventLogs({ abi: tokenAbi, logs, eventName: 'AuthorizationUsed' })) {
    const key = `${l.args.authorizer.toLowerCase()}:${l.args.nonce.toLowerCase()}`;
    const t = transferAt.get(`${l.transactionHash}:${l.logIndex + 1}`);
    const list = movedBy.get(key) ?? [];
    if (t && t.from === l.args.authorizer.toLowerCase()) {
      list.push(t);
      nonceOf.set(t, l.args.nonce.toLowerCase());
    }
    movedBy.set(key, list);
  }
  /** Every refund nonce an audited authorization could use (sequence 0 to 100): names a transfer its ledger lacks. */
  const refundPlaces = new Map<string, string>();
  const merchant = world.merchant.address as Address;
  const merchantKey = merchant.toLowerCase();

  const head = await world.publicClient.getBlock();
  let captures = 0;
  let cancellations = 0;
  let capturedValue = 0n;
  /** What the merchant keeps by authcap's word: Σ over captured authorizations of amountCaptured − amountRefunded. */
  let kept = 0n;
  const keptByPayer = new Map<string, bigint>();
  let refundsAudited = 0;
  let refundsSent = 0;
  let releasesAudited = 0;
  const refundNonces = new Set<string>();
  const answered = new Set([...(options.refundAnswers?.values() ?? [])].flat());
  for (const id of ids) {
    const a = await read(id);
    if (!a.authorization) continue;
    const key = `${a.authorization.from.slice(2).toLowerCase()}:${a.authorization.nonce.toLowerCase()}`;
    const onchain = byNonce.get(key) ?? { used: 0, canceled: 0 };
    if (onchain.used + onchain.canceled > 1) {
      counts.capturedTwice += 1;
      details.push(`${id}: ${onchain.used} used + ${onchain.canceled} canceled logs`);
    }
    const final = ['captured', 'canceled', 'voided', 'expired', 'rejected'].includes(a.state);
    if (!final && Number(a.authorization.validBefore) + 120 < Number(head.timestamp)) {
      counts.stuck += 1;
      details.push(`${id}: ${a.state} past its deadline`);
    }
    const agrees =
      (a.state === 'captured' && onchain.used === 1) ||
      (a.state === 'canceled' && onchain.canceled === 1) ||
      (['voided', 'expired', 'rejected', 'drafted', 'stored'].includes(a.state) && onchain.used === 0 && (a.state !== 'expired' || onchain.canceled === 0)) ||
      (!final && a.state !== 'drafted' && a.state !== 'stored');
    if (!agrees) {
      counts.lost += 1;
      details.push(`${id}: authcap says ${a.state}, the chain has ${onchain.used} used / ${onchain.canceled} canceled`);
    }
    if (a.state === 'captured') capturedValue += BigInt(a.authorization.value);
    if (a.state === 'captured' && a.capture?.by === 'authcap') captures += 1;
    if (a.state === 'canceled' && a.cancellation?.by === 'authcap') cancellations += 1;
    const payer = a.authorization.from.toLowerCase();
    const amountCaptured = minor(a.amountCaptured);
    const amountRefunded = minor(a.amountRefunded);
    if (a.state === 'captured') {
      kept += amountCaptured - amountRefunded;
      keptByPayer.set(payer, (keptByPayer.get(payer) ?? 0n) + amountCaptured - amountRefunded);
    }
    if (!mayHaveRefunds(a)) continue;

    // Its refunds against the chain: each nonce once, a succeeded one moved exactly its amount to the
    // payer, a failed one nothing, none still pending.
    const runId = parseResourceId(id)?.runId;
    if (runId)
      for (let sequence = 0; sequence <= MAX_REFUNDS_PER_AUTHORIZATION; sequence += 1)
        refundPlaces.set(refundNonce(runId, sequence).toLowerCase(), `${id} #${sequence}`);
    const refunds: Refund[] = await readRefunds(id);
    let refundedOnchain = 0n;
    let succeeded = 0n;
    let promised = 0n;
    let release: Refund | undefined;
    for (const r of refunds) {
      const place = parseRefundId(r.id);
      if (!place || place.authorizationId !== id) {
        counts.lost += 1;
        details.push(`${id}: refund ${r.id} does not name this authorization`);
        continue;
      }
      const isRelease = place.sequence === 0;
      if (isRelease) {
        release = r;
        releasesAudited += 1;
        if (r.reason !== PARTIAL_CAPTURE_REASON) {
          counts.lost += 1;
          details.push(`${id}: refund ${r.id} is sequence 0 but its reason is ${r.reason}`);
        }
      } else {
        refundsAudited += 1;
        if (options.refundAnswers && !answered.has(r.id)) {
          counts.capturedTwice += 1;
          details.push(`${id}: refund ${r.id} (${r.amount}, ${r.state}) was never the answer to a request: a request made twice?`);
        }
      }
      const nonce = refundNonce(place.authorizationRunId, place.sequence).toLowerCase();
      const nonceKey = `${merchantKey}:${nonce}`;
      if (refundNonces.has(nonceKey)) {
        counts.capturedTwice += 1;
        details.push(`${id}: refund ${r.id} shares its nonce with another refund`);
      }
      refundNonces.add(nonceKey);
      const logsOf = byNonce.get(`${merchantKey.slice(2)}:${nonce}`) ?? { used: 0, canceled: 0 };
      const moved = movedBy.get(nonceKey) ?? [];
      if (logsOf.used > 1 || moved.length > 1) {
        counts.capturedTwice += 1;
        details.push(`${id}: refund ${r.id} has ${logsOf.used} AuthorizationUsed logs and ${moved.length} transfers: sent twice`);
      }
      for (const m of moved) {
        refundedOnchain += m.value;
        explained.add(m);
      }
      const amount = minor(r.amount);
      if (r.state === 'succeeded') {
        refundsSent += 1;
        if (!isRelease) succeeded += amount;
        const one = moved[0];
        if (moved.length !== 1 || !one || one.value !== amount || one.to !== payer) {
          counts.lost += 1;
          details.push(
            `${id}: refund ${r.id} succeeded for ${r.amount}, the chain moved ${moved.map((m) => `${formatAmount(m.value)} to ${m.to}`).join(', ') || 'nothing'} under its nonce`,
          );
        } else if (r.transactionHash?.toLowerCase() !== one.transactionHash.toLowerCase()) {
          counts.lost += 1;
          details.push(`${id}: refund ${r.id} says transaction ${r.transactionHash}, its nonce was used in ${one.transactionHash}`);
        }
      } else if (r.state === 'failed') {
        if (logsOf.used > 0 || moved.length > 0) {
          counts.lost += 1;
          details.push(
            `${id}: refund ${r.id} failed (${r.failure?.code}) but the chain moved ${moved.map((m) => formatAmount(m.value)).join(', ')} under its nonce`,
          );
        }
      } else {
        if (!isRelease) promised += amount;
        counts.stuck += 1;
        details.push(`${id}: refund ${r.id} (${r.amount}) still pending after the grace period`);
      }
    }
    if (amountRefunded !== succeeded) {
      counts.lost += 1;
      details.push(`${id}: amountRefunded ${a.amountRefunded}, its succeeded refunds sum to ${formatAmount(succeeded)}`);
    }
    if (succeeded + promised > amountCaptured && a.state === 'captured') {
      counts.capturedTwice += 1;
      details.push(`${id}: refunds of ${formatAmount(succeeded + promised)} (succeeded or pending) for ${a.amountCaptured} captured`);
    }
    if (a.state !== 'captured') continue;
    // The payer's side of this one authorization: its capture in, its refunds (the release included) out.
    const capturedOnchain = (movedBy.get(`${payer}:${a.authorization.nonce.toLowerCase()}`) ?? [])
      .filter((m) => m.to === a.authorization!.to.toLowerCase())
      .reduce((sum, m) => sum + m.value, 0n);
    if (refundedOnchain > capturedOnchain) {
      counts.capturedTwice += 1;
      details.push(`${id}: the payer got ${formatAmount(refundedOnchain)} back for ${formatAmount(capturedOnchain)} captured onchain: refunded twice`);
    }
    if (capturedOnchain - refundedOnchain !== amountCaptured - amountRefunded) {
      counts.lost += 1;
      details.push(
        `${id}: the chain moved ${formatAmount(capturedOnchain)} in and ${formatAmount(refundedOnchain)} back, authcap says captured ${a.amountCaptured} − refunded ${a.amountRefunded}`,
      );
    }
    if (release && release.state === 'succeeded' && amountCaptured + minor(release.amount) !== BigInt(a.authorization.value)) {
      counts.lost += 1;
      details.push(`${id}: captured ${a.amountCaptured} + released ${release.amount} ≠ the ${formatAmount(BigInt(a.authorization.value))} signed`);
    }
    if (!release && amountCaptured !== BigInt(a.authorization.value)) {
      counts.lost += 1;
      details.push(`${id}: captured ${a.amountCaptured} of ${formatAmount(BigInt(a.authorization.value))} with no release`);
    }
  }
  if (refundsPending > 0 && counts.stuck === 0)
    details.push(`note: ${refundsPending} authorization(s) had refunds pending past the grace period while the audit waited`);
  // Every token that left the merchant went back to a payer by a refund authcap reports.
  for (const t of transfers) {
    if (t.from !== merchantKey || explained.has(t)) continue;
    counts.lost += 1;
    const nonce = nonceOf.get(t);
    const place = nonce ? refundPlaces.get(nonce) : undefined;
    details.push(
      `the merchant sent ${formatAmount(t.value)} to ${t.to} in ${t.transactionHash}, which no audited refund explains${place ? ` (under the nonce of refund ${place}, which its ledger does not hold)` : ''}`,
    );
  }
  // Each Idempotency-Key is one refund.
  for (const [key, refundIds] of options.refundAnswers ?? []) {
    const distinct = [...new Set(refundIds)];
    if (distinct.length > 1) {
      counts.capturedTwice += 1;
      details.push(`Idempotency-Key ${key} was answered with ${distinct.length} refunds: ${distinct.join(', ')}`);
    }
  }
  if (refundsAudited + releasesAudited > 0) details.push(`note: ${refundsAudited} refunds and ${releasesAudited} partial-capture releases audited`);
  if (unavailable > 0) details.push(`note: ${unavailable} read(s) answered temporal_unavailable and were retried`);
  // No nonce gap: whatever the relayer sent is mined (pending == latest once the pool drains).
  const drained = await eventually(
    async () => {
      const [latest, pending] = await Promise.all([
        world.publicClient.getTransactionCount({ address: merchant, blockTag: 'latest' }),
        world.publicClient.getTransactionCount({ address: merchant, blockTag: 'pending' }),
      ]);
      return { latest, pending };
    },
    (c) => c.latest === c.pending,
    60_000,
  );
  if (!drained || drained.latest !== drained.pending) {
    counts.nonceGaps += 1;
    details.push(`merchant pending ${drained?.pending} ≠ latest ${drained?.latest}`);
  }
  const sent = (drained?.latest ?? 0) - options.merchantTxBefore;
  const allowed = captures + cancellations + refundsSent + (options.expectedExtraTx ?? 0);
  if (sent > allowed)
    details.push(
      `note: merchant sent ${sent} transactions for ${captures} captures + ${cancellations} cancellations${refundsSent > 0 ? ` + ${refundsSent} refunds` : ''} (reverted retries or no-op fillers)`,
    );
  // Money: the merchant holds exactly what authcap says it kept (each world starts it at zero): the
  // captured sum when nothing was refunded.
  const merchantBalance = (await world.publicClient.readContract({
    address: world.tokenAddress,
    abi: tokenAbi,
    functionName: 'balanceOf',
    args: [merchant],
  })) as bigint;
  if (merchantBalance !== kept + (options.expectedExtraValue ?? 0n)) {
    counts.lost += 1;
    details.push(
      kept === capturedValue
        ? `merchant holds ${merchantBalance}, authcap captured ${capturedValue}`
        : `merchant holds ${merchantBalance}, authcap captured − refunded ${kept} (captured authorizations' signed value ${capturedValue})`,
    );
  }
  // Each payer moved by exactly what it paid: −Σ(amountCaptured − amountRefunded) of its authorizations.
  // A payer whose tokens moved to or from anyone but the merchant (a payer race moving funds away)
  // is not judged by balance: the per-authorization checks above still hold for it.
  const outside = new Set<string>();
  for (const t of transfers) {
    if (t.blockNumber <= world.startBlock) continue;
    if (t.from !== merchantKey && t.to !== merchantKey) outside.add(t.from).add(t.to);
  }
  let payersChecked = 0;
  for (const p of world.payers) {
    const address = p.address.toLowerCase();
    const start = world.payerBalancesAtStart.get(address);
    if (start === undefined) continue;
    if (outside.has(address)) {
      details.push(`note: payer ${p.address} moved tokens outside authcap: its balance is not judged`);
      continue;
    }
    payersChecked += 1;
    const now = (await world.publicClient.readContract({ address: world.tokenAddress, abi: tokenAbi, functionName: 'balanceOf', args: [p.address] })) as bigint;
    const expected = -(keptByPayer.get(address) ?? 0n);
    if (now - start !== expected) {
      counts.lost += 1;
      details.push(`payer ${p.address} changed by ${formatAmount(now - start)}, authcap says ${formatAmount(expected)}`);
    }
  }
  if (refundsAudited + releasesAudited > 0) details.push(`note: ${payersChecked} payer balances checked`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  appendFileSync(join(RESULTS_DIR, 'results.jsonl'), `${JSON.stringify({ case: options.caseName, ...counts, details })}\n`);
  return { ...counts, details };
}

export function merchantTransfers(receiptLogs: Parameters<typeof parseEventLogs>[0]['logs']): number {
  return parseEventLogs({ abi: tokenAbi, logs: receiptLogs, eventName: 'Transfer' }).length;
}

export type { Hex };
