// Refunds for order services: give money back from a captured authorization, list and read refunds.
// The ledger is the authorization's refunds workflow (workflows/refunds.ts), started by the first
// refund; reads come from its memo (no workflow task), and a partial capture's release from the
// authorization's own memo.
import { createHash, randomUUID } from 'node:crypto';
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { parseAmount } from '../domain/amount.js';
import type { AuthorizationResource } from '../domain/authorization.js';
import { AuthcapError } from '../domain/errors.js';
import { readVariable } from '../runtime/settings/read.js';
import {
  PARTIAL_CAPTURE_REASON,
  REFUNDS_WORKFLOW_TYPE,
  ledgerFromMemo,
  parseRefundId,
  publicRefund,
  refundStateOf,
  refundsWorkflowId,
  type Refund,
  type RefundLedgerView,
  type RefundRecord,
} from '../domain/refunds.js';
import { OrderIdAttribute, PayerAttribute } from '../domain/searchAttributes.js';
import { REFUND_ALREADY_REQUESTED, refundUpdate, type RefundCommand, type RefundsWorkflowInput } from '../workflows/refundMessages.js';
import { resourceId } from './ids.js';
import { serverCall, workerCall } from './temporalCalls.js';
import { authorizationBusy } from './temporalErrors.js';
import { sealedEntries } from '../domain/sealed.js';

export interface RefundRequest {
  /** Decimal token amount, e.g. "3.00"; absent: all that is left of the capture. */
  amount?: string | number;
  /** Why, for the merchant's own records (at most 500 characters). */
  reason?: string;
}

export interface RefundOptions {
  /** How long to wait for the refund to be final before answering with it pending (default 15 s). */
  waitMs?: number;
  /**
   * The same key is the same refund: a retry (after a timeout, a crash) gets it back instead of a
   * second one. The HTTP API passes the caller's Idempotency-Key here. Default: a fresh one.
   */
  idempotencyKey?: string;
}

export interface RefundOutcome {
  refund: Refund;
  /** False when it was still pending after the wait: read it again with getRefund. */
  settled: boolean;
}

/** What the refunds need of the client: the authorization as it stands, with its memo's release. */
export interface RefundsContext {
  temporal: Client;
  taskQueue: string;
  ping(): Promise<unknown>;
  /** The authorization's own view and a partial capture's release (its memo). */
  readAuthorization(id: string): Promise<{ resource: AuthorizationResource; release: RefundRecord | null; firstRunId: string }>;
}

const MAX_REASON = 500;

/**
 * How long after its capture an authorization accepts refunds (AUTHCAP_REFUND_WINDOW_DAYS, default 30:
 * the namespace's default retention, after which the captured authorization itself is gone). Read
 * where refunds are asked for (the API, the CLI); the refunds workflow keeps what its first refund set.
 */
export function refundWindowDays(env: NodeJS.ProcessEnv = process.env): number {
  return readVariable('AUTHCAP_REFUND_WINDOW_DAYS', env);
}

export class Refunds {
  constructor(private readonly ctx: RefundsContext) {}

  /** Gives money back; resolves once the refund is final, or after `waitMs` with it pending. */
  async refund(authorizationId: string, request: RefundRequest = {}, options: RefundOptions = {}): Promise<RefundOutcome> {
    const reason = parseReason(request?.reason);
    const { resource, firstRunId: runId } = await this.ctx.readAuthorization(authorizationId);
    // Amounts are in the authorization's token's decimals.
    const decimals = resource.token?.decimals;
    const amountMinor = request?.amount === undefined || request.amount === null ? null : parseAmount(request.amount, decimals);
    if (resource.state !== 'captured' || !resource.authorization) {
      throw new AuthcapError('invalid_state', `cannot refund: the authorization is ${resource.state}; only a captured one can be refunded`);
    }
    const captured = parseAmount(resource.amountCaptured, decimals);
    const capturedAt = resource.capture?.confirmedAt ?? new Date().toISOString();
    const refundableUntil = new Date(Date.parse(capturedAt) + refundWindowDays() * 86_400_000).toISOString();
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
    if (Date.now() >= Date.parse(refundableUntil)) return this.follow(runId, await this.answerFromClosedLedger(runId, command, refundableUntil), 0);
    const input: RefundsWorkflowInput = {
      authorizationRunId: runId,
      orderId: resource.orderId,
      payer: resource.authorization.from,
      merchant: resource.authorization.to,
      amountCapturedMinor: captured.toString(),
      captureTransactionHash: resource.capture?.transactionHash ?? null,
      // Its events in its own memo, its writes coalesced (workflows/refunds.ts).
      generation: 2,
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
    const record = await this.ask(runId, input, command);
    return this.follow(runId, record, options.waitMs ?? 15_000);
  }

  /** The authorization's refunds in order: a partial capture's release first, then each refund. */
  async listRefunds(authorizationId: string): Promise<Refund[]> {
    const { release, firstRunId } = await this.ctx.readAuthorization(authorizationId);
    const ledger = await this.ledger(firstRunId);
    return [...(release ? [release] : []), ...(ledger?.refunds ?? [])].map(publicRefund);
  }

  async getRefund(refundId: string): Promise<Refund> {
    const parsed = parseRefundId(refundId);
    if (!parsed) throw new AuthcapError('not_found', `no refund with id ${String(refundId).slice(0, 100)}`);
    const found =
      parsed.sequence === 0
        ? (await this.ctx.readAuthorization(parsed.authorizationId).catch(notFound(refundId))).release
        : (await this.ledger(parsed.authorizationRunId))?.refunds.find((r) => r.sequence === parsed.sequence);
    if (!found || found.orderId !== parsed.orderId) throw new AuthcapError('not_found', `no refund with id ${refundId}`);
    return publicRefund(found);
  }

  /** What the refunds have given back of a captured authorization, in minor units (0n: none). */
  async amountRefunded(authorizationRunId: string): Promise<bigint> {
    const ledger = await this.ledger(authorizationRunId);
    return BigInt(ledger?.amountRefundedMinor ?? '0');
  }

  /** The refunds workflow's ledger, from its memo (open or closed); undefined when it never started. */
  private async ledger(authorizationRunId: string): Promise<RefundLedgerView | undefined> {
    const description = await this.describe(authorizationRunId);
    return ledgerFromMemo(sealedEntries(description?.memo));
  }

  private async describe(authorizationRunId: string): Promise<WorkflowExecutionDescription | undefined> {
    try {
      return await serverCall(this.ctx.temporal, () => this.ctx.temporal.workflow.getHandle(refundsWorkflowId(authorizationRunId)).describe());
    } catch (err) {
      if (err instanceof AuthcapError && err.code === 'not_found') return undefined;
      throw err;
    }
  }

  /** One round trip: the refunds workflow starts with the first refund (update-with-start). */
  private async ask(runId: string, input: RefundsWorkflowInput, command: RefundCommand, round = 1, replaceSquatter = false): Promise<RefundRecord> {
    const { temporal, taskQueue } = this.ctx;
    // A start operation is sent once: each ask (after a dropped update) makes its own.
    const start = () =>
      new WithStartWorkflowOperation(REFUNDS_WORKFLOW_TYPE, {
        workflowId: refundsWorkflowId(runId),
        taskQueue,
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
      workerCall<RefundRecord | typeof closed>(
        temporal,
        () => this.ctx.ping(),
        // Told apart before the call's errors are translated: here "already started" means closed.
        () =>
          temporal.workflow.executeUpdateWithStart(refundUpdate, { args: [command], startWorkflowOperation: start() }).catch((err: unknown) => {
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
      if (round < 3 && err instanceof AuthcapError && err.code === 'internal_error' && (await this.squatted(runId))) return squatter;
      throw err;
    });
    if (answer === squatter) return this.ask(runId, input, command, round + 1, true);
    if (answer !== closed) return answer;
    // "Already started" while the ledger is open: it was rolling over (continue-as-new) as we asked.
    if ((await this.ledger(runId))?.open && round < 3) return this.ask(runId, input, command, round + 1);
    if (round < 3 && (await this.squatted(runId))) return this.ask(runId, input, command, round + 1, true);
    return this.answerFromClosedLedger(runId, command);
  }

  /**
   * The refunds id was taken by a start authcap did not make (refused at its first task: the run
   * FAILED and never kept a ledger). It holds nothing, so a real ledger may take its place.
   */
  private async squatted(runId: string): Promise<boolean> {
    const description = await this.describe(runId);
    return description?.status.name === 'FAILED' && ledgerFromMemo(sealedEntries(description.memo)) === undefined;
  }

  /** The refunds of this authorization have ended (all refunded, or the window closed): say which. */
  private async answerFromClosedLedger(runId: string, command: RefundCommand, closedAt?: string): Promise<RefundRecord> {
    const ledger = await this.ledger(runId);
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

  /** Until the refund is final or the wait ends, from the ledger's memo (no workflow task). */
  private async follow(runId: string, record: RefundRecord, waitMs: number): Promise<RefundOutcome> {
    const deadline = Date.now() + waitMs;
    let current = record;
    const started = Date.now();
    while (refundStateOf(current.stage) === 'pending' && Date.now() < deadline) {
      // A refund takes about a capture's time (its block, then its depth): look first when it can be
      // done, then often while it usually ends, then calmly. Each look is one describe, no workflow task.
      const elapsed = Date.now() - started;
      const pause = elapsed < 250 ? 250 - elapsed : elapsed < 3_000 ? 150 : 500;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(deadline - Date.now(), 0))));
      const ledger = await this.ledger(runId).catch(() => undefined);
      current = ledger?.refunds.find((r) => r.sequence === record.sequence) ?? current;
    }
    const refund = publicRefund(current);
    return { refund, settled: refund.state !== 'pending' };
  }
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

function notFound(refundId: string) {
  return (err: unknown) => {
    if (err instanceof AuthcapError && err.code === 'not_found') throw new AuthcapError('not_found', `no refund with id ${refundId}`);
    throw err;
  };
}
