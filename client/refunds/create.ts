// `refunds.create`: gives money back from a captured authorization (all that is left when no amount
// is given), from the merchant key that received the capture. The ledger is the authorization's
// refunds workflow (workflows/refunds.ts), started by the first refund (update-with-start, one round
// trip); the refund is then followed from the ledger's memo until it is final or the wait ends.
import { createHash, randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { parseAmount } from '../../domain/amount.js';
import { AuthcapError } from '../../domain/errors.js';
import { resourceId } from '../../domain/ids.js';
import { PARTIAL_CAPTURE_REASON, REFUNDS_WORKFLOW_TYPE, ledgerFromMemo, refundsWorkflowId, type RefundRecord } from '../../domain/refunds.js';
import { sealedEntries } from '../../domain/sealed.js';
import { OrderIdAttribute, PayerAttribute } from '../../domain/searchAttributes.js';
import { REFUND_ALREADY_REQUESTED, refundUpdate, type RefundCommand, type RefundsWorkflowInput } from '../../workflows/refundMessages.js';
import { attemptOf } from '../authorizations/attempt.js';
import { readAuthorization, type ReadContext } from '../authorizations/readModel.js';
import { authorizationBusy } from '../transport/errors.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { followRefund } from './follow.js';
import { describeLedger, readLedger } from './ledger.js';
import type { RefundOptions, RefundOutcome, RefundRequest } from './types.js';

export interface RefundsContext extends ReadContext {
  /**
   * How long after its capture an authorization accepts refunds (AUTHCAP_REFUND_WINDOW_DAYS, read by
   * the process's entry). The refunds workflow keeps what its first refund set.
   */
  refundWindowDays: number;
}

const MAX_REASON = 500;
/** How long a refund's wait lasts unless the caller says. */
const DEFAULT_WAIT_MS = 15_000;

/** Resolves once the refund is final (succeeded, or failed with nothing moved), or after `waitMs` with it pending. */
export async function create(ctx: RefundsContext, authorizationId: string, request: RefundRequest = {}, options: RefundOptions = {}): Promise<RefundOutcome> {
  const { transport } = ctx;
  attemptOf(authorizationId);
  const reason = parseReason(request?.reason);
  const { resource, firstRunId: runId } = await readAuthorization(ctx, authorizationId);
  // Amounts are in the authorization's token's decimals.
  const decimals = resource.token?.decimals;
  const amountMinor = request?.amount === undefined || request.amount === null ? null : parseAmount(request.amount, decimals);
  if (resource.state !== 'captured' || !resource.authorization) {
    throw new AuthcapError('invalid_state', `cannot refund: the authorization is ${resource.state}; only a captured one can be refunded`);
  }
  const captured = parseAmount(resource.amountCaptured, decimals);
  const lastPart = resource.captures.filter((c) => c.status === 'succeeded').at(-1);
  const capturedAt = resource.capture?.confirmedAt ?? lastPart?.succeededAt ?? new Date().toISOString();
  const windowEnds = Date.parse(capturedAt) + ctx.refundWindowDays * 86_400_000;
  // A held payment's refunds go through the escrow, which takes them until the hold's refundExpiry.
  const refundableUntil = new Date(resource.hold ? Math.min(windowEnds, Date.parse(resource.hold.refundBefore)) : windowEnds).toISOString();
  // Decided here, before anything starts: no refunds workflow exists for a request that could never fit.
  if (amountMinor !== null && amountMinor > captured) {
    throw new AuthcapError('refund_exceeds_captured', `a refund of ${request.amount} is more than was captured, ${resource.amountCaptured}`);
  }
  const command: RefundCommand = {
    amountMinor: amountMinor === null ? null : amountMinor.toString(),
    reason,
    requestKey: digest(options.idempotencyKey ?? randomUUID()),
    requestFingerprint: digest(JSON.stringify([amountMinor === null ? null : amountMinor.toString(), reason])),
  };
  // Past the window nothing new starts; a retry of a refund accepted in time still gets that refund.
  if (Date.now() >= Date.parse(refundableUntil))
    return followRefund(transport, runId, await answerFromClosedLedger(transport, runId, command, refundableUntil), 0);
  const input: RefundsWorkflowInput = {
    authorizationRunId: runId,
    orderId: resource.orderId,
    payer: resource.authorization.from,
    // A hold's authorization names the escrow's collector as `to`: the merchant key is the hold's receiver.
    merchant: resource.hold?.terms.receiver ?? resource.authorization.to,
    amountCapturedMinor: captured.toString(),
    captureTransactionHash: resource.capture?.transactionHash ?? null,
    ...(resource.hold ? { hold: { paymentInfo: resource.hold.terms, paymentInfoHash: resource.hold.paymentInfoHash } } : {}),
    ...(resource.network && resource.token
      ? { chain: { network: resource.network, token: resource.token.address, symbol: resource.token.symbol, decimals: resource.token.decimals } }
      : {}),
    capturedAt,
    refundableUntil,
    requestedAt: new Date().toISOString(),
    authorization: {
      id: resourceId(resource.orderId, runId),
      orderId: resource.orderId,
      state: resource.state,
      amount: resource.amount,
      amountCaptured: resource.amountCaptured,
      amountRefunded: resource.amountRefunded,
    },
  };
  const record = await ask(transport, runId, input, command);
  return followRefund(transport, runId, record, options.waitMs ?? DEFAULT_WAIT_MS);
}

/** One round trip: the refunds workflow starts with the first refund (update-with-start). */
async function ask(
  transport: TemporalTransport,
  runId: string,
  input: RefundsWorkflowInput,
  command: RefundCommand,
  round = 1,
  replaceSquatter = false,
): Promise<RefundRecord> {
  // A start operation is sent once: each ask (after a dropped update) makes its own.
  const start = () =>
    new WithStartWorkflowOperation(REFUNDS_WORKFLOW_TYPE, {
      workflowId: refundsWorkflowId(runId),
      taskQueue: transport.taskQueue,
      args: [input],
      // Concurrent first refunds meet in one workflow; a closed one is never started afresh (its
      // ledger would be lost): its memo answers instead.
      workflowIdConflictPolicy: 'USE_EXISTING',
      // Only a run that failed without a ledger is replaced: a start nobody authenticated took the id.
      workflowIdReusePolicy: replaceSquatter ? 'ALLOW_DUPLICATE_FAILED_ONLY' : 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: OrderIdAttribute, value: input.orderId },
        { key: PayerAttribute, value: input.payer },
      ],
    });
  const closed = 'closed' as const;
  const squatter = 'squatter' as const;
  const answer: RefundRecord | typeof closed | typeof squatter = await askAgainIfDropped(() =>
    transport.worker<RefundRecord | typeof closed>(
      // Told apart before the call's errors are translated: here "already started" means closed.
      () =>
        transport.workflow.executeUpdateWithStart(refundUpdate, { args: [command], startWorkflowOperation: start() }).catch((err: unknown) => {
          if (isClosed(err)) return closed;
          // The same request again: the workflow refused it (no trace) and named the refund it made.
          const earlier = alreadyRequested(err);
          if (earlier) return earlier;
          throw err;
        }),
      30_000,
    ),
  ).catch(async (err: unknown) => {
    // A start nobody authenticated held the id as we asked: its run refuses its start at its first
    // task and rejects the update it was handed as unhandled (no code of ours). Once it failed, it
    // holds nothing, and a real ledger takes its place.
    if (round < 3 && err instanceof AuthcapError && err.code === 'internal_error' && (await squatted(transport, runId))) return squatter;
    throw err;
  });
  if (answer === squatter) return ask(transport, runId, input, command, round + 1, true);
  if (answer !== closed) return answer;
  // "Already started" while the ledger is open: it was rolling over (continue-as-new) as we asked.
  if ((await readLedger(transport, runId))?.open && round < 3) return ask(transport, runId, input, command, round + 1);
  if (round < 3 && (await squatted(transport, runId))) return ask(transport, runId, input, command, round + 1, true);
  return answerFromClosedLedger(transport, runId, command);
}

/**
 * The refunds id was taken by a start authcap did not make (refused at its first task: the run
 * FAILED and never kept a ledger). It holds nothing, so a real ledger may take its place.
 */
async function squatted(transport: TemporalTransport, runId: string): Promise<boolean> {
  const description = await describeLedger(transport, runId);
  return description?.status.name === 'FAILED' && ledgerFromMemo(sealedEntries(description.memo)) === undefined;
}

/** The refunds of this authorization have ended (all refunded, or the window closed): say which. */
async function answerFromClosedLedger(transport: TemporalTransport, runId: string, command: RefundCommand, closedAt?: string): Promise<RefundRecord> {
  const ledger = await readLedger(transport, runId);
  const earlier = ledger?.refunds.find((r) => r.requestKey === command.requestKey);
  if (earlier) {
    if (earlier.requestFingerprint !== command.requestFingerprint)
      throw new AuthcapError('idempotency_key_reused', 'this Idempotency-Key was used for a different refund');
    return earlier;
  }
  if (ledger && BigInt(ledger.amountRefundedMinor) >= BigInt(ledger.amountCapturedMinor)) {
    throw new AuthcapError('refund_exceeds_captured', 'nothing is left to refund: everything captured has been refunded');
  }
  const until = ledger?.refundableUntil || closedAt;
  throw new AuthcapError('invalid_state', `refunds for this authorization closed${until ? ` at ${until}` : ''}`);
}

function parseReason(reason: unknown): string | null {
  if (reason === undefined || reason === null) return null;
  if (typeof reason !== 'string') throw new AuthcapError('validation_error', 'reason must be a string', { field: 'reason' });
  const trimmed = reason.trim();
  if (trimmed.length > MAX_REASON) throw new AuthcapError('validation_error', `reason is longer than ${MAX_REASON} characters`, { field: 'reason' });
  if (trimmed === PARTIAL_CAPTURE_REASON) {
    throw new AuthcapError('validation_error', `reason "${PARTIAL_CAPTURE_REASON}" is kept for what a partial capture gives back`, { field: 'reason' });
  }
  return trimmed || null;
}

/** Keys and requests are kept as digests: the ledger never holds a caller's raw Idempotency-Key. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function isClosed(err: unknown): boolean {
  if (err instanceof WorkflowExecutionAlreadyStartedError) return true;
  const cause = (err as { cause?: unknown })?.cause;
  return cause instanceof WorkflowExecutionAlreadyStartedError || /already (started|completed)/i.test(String((err as Error)?.message ?? ''));
}

/**
 * The server drops an update a workflow task carried but did not answer (a burst of updates at one
 * workflow): nothing was applied, so asking again is safe (the request key makes it the same refund).
 * Still dropped after three tries: 429, retry shortly.
 */
async function askAgainIfDropped<T>(ask: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await ask();
    } catch (err) {
      const dropped = err instanceof AuthcapError && err.code === 'internal_error' && /wasn't processed by worker/.test(err.message);
      if (!dropped) throw err;
      if (attempt >= 3) throw authorizationBusy();
    }
  }
}

function alreadyRequested(err: unknown): RefundRecord | undefined {
  const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
  if (cause instanceof ApplicationFailure && cause.type === REFUND_ALREADY_REQUESTED) return cause.details?.[0] as RefundRecord | undefined;
  return undefined;
}
