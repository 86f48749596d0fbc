// Carrying one refund to its end, in workflow code: activities gather facts, the refund machine
// decides each step. Used by the refunds workflow (refunds after a capture) and by the authorization's
// own workflow (a partial capture's release). Node outages only delay a refund: the loop outlives
// them, and every step resumes from the record after a crash.
import { ApplicationFailure, log, sleep, workflowInfo } from '@temporalio/workflow';
import type { Hex } from 'viem';
import type { ActivityOptions } from '@temporalio/common';
import type { CaptureRequest } from '../domain/activityContract.js';
import type { RefundCall } from '../domain/relay.js';
import { decimalsOf, formatAmount } from '../domain/amount.js';
import { isErrorCode } from '../domain/errors.js';
import type { RefundRecord } from '../domain/refunds.js';
import { localReads, waits } from './activities.js';
import { failureOf } from './failures.js';
import { isRefundFinal, stepRefund, type RefundMachineEvent } from './refundMachine.js';
import type { Relay } from './relayClient.js';
import { followUnlessTroubled } from './followOnchain.js';

type Command = RefundMachineEvent extends infer E ? (E extends RefundMachineEvent ? Omit<E, 'at'> : never) : never;

export interface RefundDependencies {
  relay: Relay;
  /** Every new version of the record, as soon as the machine made it (publish it, announce it). */
  onChange(record: RefundRecord, previous: RefundRecord): void;
  /**
   * Whether a refund whose attempt is refused or reverted may be set aside until that attempt's
   * window has closed (it is returned, still pending; run it again once `expiryDueAt` has passed),
   * rather than held here for the whole window. The refunds workflow carries on with other refunds
   * meanwhile; a partial capture's release has nothing else to do.
   */
  setAsideWhileExpiring?: boolean;
}

/** Seconds past an attempt's validBefore (chain time) after which its window is worth checking at depth. */
const EXPIRY_MARGIN_SECONDS = 5;

/** When a refund set aside in awaitingExpiry is due to be carried on (workflow time, ms). */
export function expiryDueAt(record: Pick<RefundRecord, 'validBefore'>): number {
  return (Number(record.validBefore ?? '0') + EXPIRY_MARGIN_SECONDS) * 1000;
}

const now = () => new Date().toISOString();
/** Pauses after a step failed (the node down, say), doubling to at most 5 minutes: an outage of hours adds a bounded history. */
const FIRST_PAUSE_MS = 5_000;
const LONGEST_PAUSE_MS = 5 * 60_000;

/** Runs the refund until it succeeded or failed (or, if the caller allows it, was set aside while an attempt's window closes); returns its record. */
export async function runRefund(initial: RefundRecord, deps: RefundDependencies): Promise<RefundRecord> {
  let record = initial;
  // The signed call of the attempt in flight. Kept in workflow memory, never in the record: the memo
  // is shown to operators, and an unused signature is a payment credential. A replay rebuilds it from
  // the attempt's recorded result.
  let signed: { request: CaptureRequest } | undefined;
  const step = (command: Command) => {
    const next = stepRefund(record, { ...command, at: now() } as RefundMachineEvent);
    if (next.stage === record.stage && JSON.stringify(next) === JSON.stringify(record)) return;
    const previous = record;
    record = next;
    deps.onChange(record, previous);
  };
  const label = `refund ${record.sequence} of ${record.orderId}: ${formatAmount(BigInt(record.amountMinor), decimalsOf(record.chain))} to ${record.payer}`;
  const summary = (what: string) => ({ summary: `${label} (${what})` }) as ActivityOptions;

  let failuresInARow = 0;
  while (!isRefundFinal(record)) {
    try {
      switch (record.stage) {
        case 'prechecking': {
          const attempt = await localReads.prepareRefund.executeWithOptions(summary(`attempt ${record.attempts + 1}: precheck and sign`), [
            {
              merchant: record.merchant,
              payer: record.payer,
              amountMinor: record.amountMinor,
              authorizationRunId: record.authorizationRunId,
              sequence: record.sequence,
              ...(record.fromBlock ? { fromBlock: record.fromBlock } : {}),
              ...(record.captureTransactionHash ? { captureTransactionHash: record.captureTransactionHash } : {}),
            },
          ]);
          signed = attempt.prepared ?? undefined;
          step({ type: 'PRECHECKED', attempt });
          break;
        }
        case 'submitting': {
          if (!signed) throw ApplicationFailure.create({ type: 'internal_error', nonRetryable: true, message: 'no signed attempt to send' });
          for (const command of await sendAndFollow(record, signed.request, deps.relay, summary('sent, waiting for its block and depth'))) step(command);
          break;
        }
        // An attempt found on the chain without this run following it (it landed before a crash, or
        // by the end of its window): followed to depth without sending anything.
        case 'submitted': {
          // Inclusion is judged by the AuthorizationUsed(merchant, nonce) log: a fee-bumped replacement counts.
          const request = signed?.request ?? followOnly(record);
          const included = await waits.awaitCaptureInclusion.executeWithOptions(summary('waiting for its block'), [
            { ...request, transactionHash: record.transactionHash! },
          ]);
          if (included.status === 'included') step({ type: 'INCLUDED', ...included });
          else if (included.status === 'consumed')
            step({ type: 'REVERTED', failure: { code: 'refund_reverted', message: "the refund's nonce was canceled onchain" } });
          else if (included.failure.code === 'authorization_expired') step({ type: 'EXPIRED' });
          else step({ type: 'REVERTED', failure: included.failure });
          break;
        }
        case 'preconfirmed': {
          const request = signed?.request ?? followOnly(record);
          const confirmed = await waits.awaitCaptureConfirmation.executeWithOptions(summary('waiting for the confirmation depth'), [
            { ...request, transactionHash: record.transactionHash!, blockHash: record.blockHash! },
          ]);
          if (confirmed.status === 'confirmed') step({ type: 'CONFIRMED', ...confirmed });
          else step({ type: 'REORGED' });
          break;
        }
        case 'awaitingExpiry': {
          // Its window is still open: nothing can be decided before it closes, so the caller may
          // carry on with other refunds meanwhile and come back to this one.
          if (Date.now() < expiryDueAt(record) && deps.setAsideWhileExpiring) return record;
          const onchain = await waits.awaitAuthorizationExpiry.executeWithOptions(summary('waiting for its refused attempt to expire'), [
            {
              authorizer: record.merchant,
              nonce: record.nonce!,
              validBefore: record.validBefore ?? '0',
              ...(record.fromBlock ? { fromBlock: record.fromBlock } : {}),
            },
          ]);
          step({ type: 'NONCE_STATE', onchain });
          break;
        }
      }
    } catch (err) {
      const failure = failureOf(err);
      // A refusal retrying cannot change, before anything was signed: the refund fails, nothing moved.
      if (record.stage === 'prechecking' && isFinalRefusal(err)) {
        step({ type: 'PREPARE_FAILED', failure });
        continue;
      }
      failuresInARow += 1;
      log.warn('refund step failed; trying again', { orderId: record.orderId, sequence: record.sequence, stage: record.stage, error: failure.message });
      await sleep(Math.min(FIRST_PAUSE_MS * 2 ** (failuresInARow - 1), LONGEST_PAUSE_MS));
      continue;
    }
    failuresInARow = 0;
  }
  return record;
}

/**
 * What the waits need to follow an attempt this run did not sign (it landed before a crash, or an
 * earlier run sent it): the message's fields they read. Its signature is never needed to follow it.
 */
function followOnly(record: RefundRecord): CaptureRequest {
  return {
    primaryType: 'TransferWithAuthorization',
    authorization: {
      from: record.merchant,
      to: record.payer,
      value: record.amountMinor,
      validAfter: '0',
      validBefore: record.validBefore ?? String(Number.MAX_SAFE_INTEGER),
      nonce: record.nonce!,
    },
    signature: '0x' as Hex,
  };
}

function isFinalRefusal(err: unknown): boolean {
  const failure = failureOf(err);
  return isErrorCode(failure.code) && failure.code !== 'chain_unavailable';
}

/** A failed release starts over (same refund, same nonce: the token still accepts it only once). */
export function retryRefund(record: RefundRecord): RefundRecord {
  // The last attempt's transaction stays on the record until a new attempt is signed (evidence, and its gas).
  return { ...record, stage: 'prechecking', lastError: record.failure ?? record.lastError, failure: null, failedAt: null };
}

/** A relayer request and an activity that follows it to depth, as the machine's events. */
async function sendAndFollow(record: RefundRecord, signed: CaptureRequest, relay: Relay, options: ActivityOptions): Promise<Command[]> {
  const requestId = `refund:${record.merchant}:${record.nonce}:${record.attempts}`;
  const { workflowId, runId } = workflowInfo();
  const call: RefundCall = {
    kind: 'refund',
    authorization: signed.authorization,
    signature: signed.signature,
    refund: { authorizationRunId: record.authorizationRunId, sequence: record.sequence, captureTransactionHash: record.captureTransactionHash ?? null },
  };
  const windowMs = Math.max(Number(record.validBefore ?? '0') * 1000 - Date.now(), 0) + 10 * 60_000;
  const first = await followUnlessTroubled(
    relay,
    { requestId, replyTo: { workflowId, runId }, call, ...(record.fromBlock ? { fromBlock: record.fromBlock } : {}) },
    { ...options, scheduleToCloseTimeout: windowMs },
  );
  if ('troubled' in first) {
    const answer = relay.answer(requestId)!;
    // Reverted onchain (its transaction stays on the record), or never sent: either way the signed
    // attempt may still land until its window closes (awaitingExpiry).
    if (answer.transactionHash)
      return [
        { type: 'SUBMITTED', transactionHash: answer.transactionHash },
        { type: 'REVERTED', failure: answer.failure! },
      ];
    // Its window closed before the relayer could send it (a worker down that long): this signed
    // attempt can never land, so it is signed again (same nonce), as one not mined in its window.
    if (answer.failure?.code === 'authorization_expired') return [{ type: 'EXPIRED' }];
    return [{ type: 'NOT_SENT', failure: answer.failure! }];
  }
  if ('error' in first) throw first.error;
  const outcome = first.result;
  if (outcome.status === 'expired') return [{ type: 'EXPIRED' }];
  if (outcome.status === 'consumed') return [{ type: 'NOT_SENT', failure: { code: 'refund_reverted', message: "the refund's nonce was canceled onchain" } }];
  const { transactionHash, blockNumber, blockHash } = outcome;
  return [
    { type: 'SUBMITTED', transactionHash },
    { type: 'INCLUDED', transactionHash, blockNumber, blockHash },
    { type: 'CONFIRMED', transactionHash, blockNumber, blockHash },
  ];
}
