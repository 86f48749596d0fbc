// A refund of a held payment, carried out through the escrow's `refund` (docs/holds.md#refunds): the
// escrow bounds it by what was captured of that hold less what was refunded, the merchant key (the
// operator) pays it through the network's refund collector, and the escrow's PaymentRefunded event
// proves it. Exactly once: the relayer sends it only while the escrow still says what was refundable
// when the refund was decided; refunds of a hold go one at a time, so the first PaymentRefunded of the
// hold after those already counted is this one. The record is the same refund record as a plain
// refund's (refunds API, events and webhooks are unchanged).
import { workflowInfo } from '@temporalio/workflow';
import type { Hex } from 'viem';
import { decimalsOf, formatAmount } from '../domain/amount.js';
import type { ErrorCode } from '../domain/errors.js';
import type { EscrowCall } from '../domain/escrowCall.js';
import type { EscrowRefundFacts, HeldRefund } from '../domain/holds.js';
import type { RefundRecord } from '../domain/refunds.js';
import { localReads } from './activities.js';
import { failureOf } from './failures.js';
import { followEscrowUnlessTroubled } from './followEscrow.js';
import type { RefundDependencies } from './refundProcedure.js';
import { isRefundFinal, refundFailureOf } from './refundMachine.js';

/** A refund through the escrow is followed for at most this long; past it the escrow is asked again. */
const FOLLOW_MS = 30 * 60_000;

const now = () => new Date().toISOString();
/** Approvals of the refund collector one refund may ask for before it fails with nothing moved. */
const MAX_APPROVALS = 3;

type Refusal = { code: ErrorCode; message: string };

/** Why the escrow would not take this refund now (nothing is sent), or undefined. */
export function escrowRefundRefusal(record: Pick<RefundRecord, 'amountMinor' | 'chain'>, hold: HeldRefund, facts: EscrowRefundFacts): Refusal | undefined {
  const amount = BigInt(record.amountMinor);
  const show = (minor: string | bigint) => formatAmount(BigInt(minor), decimalsOf(record.chain));
  if (BigInt(facts.blockTimestamp) >= BigInt(hold.paymentInfo.refundExpiry))
    return {
      code: 'invalid_state',
      message: `the escrow took refunds of this hold until ${new Date(Number(hold.paymentInfo.refundExpiry) * 1000).toISOString()}`,
    };
  if (facts.paused) return { code: 'token_policy_blocked', message: 'the token is paused' };
  if (facts.merchantBlacklisted) return { code: 'token_policy_blocked', message: 'the token has blacklisted the merchant' };
  if (facts.payerBlacklisted) return { code: 'token_policy_blocked', message: 'the token has blacklisted the payer' };
  if (BigInt(facts.refundableMinor) < amount)
    return { code: 'refund_exceeds_captured', message: `the escrow lets ${show(facts.refundableMinor)} of this hold be refunded, not ${show(amount)}` };
  if (BigInt(facts.merchantBalance) < amount)
    return { code: 'insufficient_merchant_balance', message: `the merchant key holds ${show(facts.merchantBalance)}, the refund needs ${show(amount)}` };
  return undefined;
}

/** Runs a held payment's refund to its end: succeeded, or failed with nothing moved. */
export async function runEscrowRefund(initial: RefundRecord, hold: HeldRefund, counted: Hex[], deps: RefundDependencies): Promise<RefundRecord> {
  let record = initial;
  const change = (next: RefundRecord) => {
    const previous = record;
    record = next;
    deps.onChange(record, previous);
  };
  const fail = ({ code, message }: Refusal) =>
    change({ ...record, stage: 'failed', failure: { code, message, at: now() }, failedAt: now(), escrowExpectRefundableMinor: null });
  const { workflowId, runId } = workflowInfo();
  const step = (name: string) => `${workflowId}:refund:${record.sequence}:${name}`;
  const call = (action: EscrowCall['action'], extra: Partial<EscrowCall> = {}): EscrowCall => ({
    kind: 'escrow',
    action,
    paymentInfo: hold.paymentInfo,
    ...extra,
  });
  const follow = (requestId: string, escrowCall: EscrowCall, fromBlock?: string | null, followOnly = false) =>
    followEscrowUnlessTroubled(
      deps.relay,
      { requestId, replyTo: { workflowId, runId }, call: escrowCall, counted, ...(fromBlock ? { fromBlock } : {}), ...(followOnly ? { followOnly } : {}) },
      hold.paymentInfoHash,
      { scheduleToCloseTimeout: FOLLOW_MS, summary: `${escrowCall.action} for refund ${record.sequence} of ${record.orderId}` },
    );

  while (!isRefundFinal(record)) {
    if (record.stage !== 'submitted' || !record.escrowExpectRefundableMinor) {
      const facts = await localReads.escrowRefundFacts({ paymentInfo: hold.paymentInfo });
      const refusal = escrowRefundRefusal(record, hold, facts);
      if (refusal) {
        fail(refusal);
        break;
      }
      // The escrow pulls a refund from the operator through its refund collector: approved once per key.
      if (BigInt(facts.allowance) < BigInt(record.amountMinor)) {
        // One approval is enough; a few tries cover a race with another refund's. Never a loop without end.
        if (record.attempts >= MAX_APPROVALS) {
          fail({ code: 'refund_reverted', message: "the merchant key's approval of the escrow's refund collector did not take" });
          break;
        }
        const requestId = step(`allow:${record.attempts}`);
        const allowed = await follow(requestId, call('allowRefunds'));
        // Refused as allowed already (another refund's approval landed first): the next look says so.
        if (!('result' in allowed) && !/allowed already/.test(relayFailure(deps, requestId, allowed).message)) {
          fail(refundFailureOf(relayFailure(deps, requestId, allowed)));
          break;
        }
        change({ ...record, attempts: record.attempts + 1 });
        continue;
      }
      change({ ...record, stage: 'submitted', escrowExpectRefundableMinor: facts.refundableMinor, fromBlock: facts.blockNumber, lastError: null });
    }
    const expected = record.escrowExpectRefundableMinor!;
    const refund = call('refund', { amount: record.amountMinor, expect: { refundable: expected } });
    const outcome = await follow(step('send'), refund, record.fromBlock);
    const landed = 'result' in outcome ? outcome : await landedAfterAll(record, hold, refund, follow, step('send'));
    if (landed && 'result' in landed && landed.result.event === 'PaymentRefunded') {
      const { transactionHash, blockNumber, blockHash, confirmedAt } = landed.result;
      change({ ...record, stage: 'succeeded', transactionHash, blockNumber, blockHash, succeededAt: confirmedAt, escrowExpectRefundableMinor: null });
      break;
    }
    fail(refundFailureOf(relayFailure(deps, step('send'), outcome)));
  }
  return record;
}

/**
 * The relayer refused or lost the refund: it may have landed anyway (sent before, by this refund's
 * own earlier request). Only this workflow refunds this hold, one refund at a time, so the escrow
 * saying `expected − amount` means this refund landed: its event is then looked for, nothing is sent.
 */
async function landedAfterAll(
  record: RefundRecord,
  hold: HeldRefund,
  refund: EscrowCall,
  follow: (requestId: string, call: EscrowCall, fromBlock?: string | null, followOnly?: boolean) => ReturnType<typeof followEscrowUnlessTroubled>,
  requestId: string,
) {
  const facts = await localReads.escrowRefundFacts({ paymentInfo: hold.paymentInfo });
  if (BigInt(facts.refundableMinor) !== BigInt(record.escrowExpectRefundableMinor!) - BigInt(record.amountMinor)) return undefined;
  return follow(`${requestId}:found`, refund, record.fromBlock, true);
}

function relayFailure(deps: RefundDependencies, requestId: string, outcome: Awaited<ReturnType<typeof followEscrowUnlessTroubled>>) {
  const answer = deps.relay.answer(requestId);
  if (answer?.failure) return answer.failure;
  if ('error' in outcome) return failureOf(outcome.error);
  return { code: 'refund_reverted' as const, message: 'the relayer did not send the refund' };
}
