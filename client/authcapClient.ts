// The typed client library order services use. Every method validates its input before anything
// reaches Temporal, and every failure is an AuthcapError with a stable code.
import { Client, Connection, WorkflowUpdateStage, type WorkflowHandle } from '@temporalio/client';
import type { Hex } from 'viem';
import { parseAddress, parseSignature } from '../domain/address.js';
import type { AuthorizationResource, AuthorizationView, AuthorizationWorkflowInput } from '../domain/authorization.js';
import { AuthcapError } from '../domain/errors.js';
import {
  AmountMinorAttribute, AuthorizationStateAttribute, OrderIdAttribute, PayerAttribute, ValidBeforeAttribute,
} from '../domain/searchAttributes.js';
import { loadTemporalSettings, type TemporalSettings } from '../runtime/temporal.js';
import {
  WORKFLOW_TYPE, cancelUpdate, captureUpdate, draftReadyUpdate, statusQuery, submitSignatureUpdate, voidUpdate,
} from '../workflows/messages.js';
import { parseResourceId, resourceId, workflowIdForOrder } from './ids.js';
import { toAuthcapError } from './temporalErrors.js';
import { parseAmount, parseOrderId, parsePresigned, parseState, parseValidFor, type PresignedRequest } from './requests.js';

export interface CreateAuthorizationRequest {
  orderId: string;
  /** The payer's address. */
  payer: string;
  /** Decimal token amount with at most 6 decimals, e.g. "12.50". */
  amount: string | number;
  /** A shorter window than the worker's AUTHCAP_VALIDITY_SECONDS, if the order needs one. */
  validForSeconds?: number;
}

/** An authorization signed elsewhere (for example an x402-style TransferWithAuthorization). */
export interface CreatePresignedRequest extends PresignedRequest {
  orderId: string;
}

export interface AuthorizationSummary {
  id: string;
  orderId: string;
  state: string;
  payer: string | null;
  amountMinor: string | null;
  validBefore: string | null;
  createdAt: string;
}

export interface ListRequest {
  orderId?: string;
  state?: string;
  payer?: string;
  limit?: number;
}

export interface CaptureOutcome {
  authorization: AuthorizationResource;
  /** False when the capture was still in flight after the wait: poll `get` for the outcome. */
  settled: boolean;
}

export class AuthcapClient {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  static async connect(settings: TemporalSettings = loadTemporalSettings()): Promise<AuthcapClient> {
    const connection = await Connection.connect(settings.connectionOptions);
    return new AuthcapClient(new Client({ connection, namespace: settings.namespace, dataConverter: settings.dataConverter }), settings.taskQueue);
  }

  async close(): Promise<void> {
    await this.temporal.connection.close();
  }

  /** Drafts a new authorization for the payer to sign; resolves once its typed data exists. */
  async createAuthorization(request: CreateAuthorizationRequest): Promise<AuthorizationResource> {
    const orderId = parseOrderId(request?.orderId);
    const payer = parseAddress(request?.payer, 'payer');
    const value = parseAmount(request?.amount);
    const validForSeconds = parseValidFor(request?.validForSeconds);
    return this.start(orderId, payer, value, { orderId, draft: { payer, value: value.toString(), validForSeconds } });
  }

  /**
   * Stores an authorization the payer signed elsewhere, after checking it against this merchant's
   * token domain and recipient. A TransferWithAuthorization is captured with transferWithAuthorization.
   */
  async createPresignedAuthorization(request: CreatePresignedRequest): Promise<AuthorizationResource> {
    const orderId = parseOrderId(request?.orderId);
    const presigned = parsePresigned(request);
    const value = BigInt(presigned.authorization.value);
    return this.start(orderId, presigned.authorization.from, value, { orderId, presigned });
  }

  private async start(orderId: string, payer: string, value: bigint, input: AuthorizationWorkflowInput): Promise<AuthorizationResource> {
    const workflowId = workflowIdForOrder(orderId);
    let runId: string;
    try {
      const handle = await this.temporal.workflow.start(WORKFLOW_TYPE, {
        taskQueue: this.taskQueue,
        workflowId,
        args: [input],
        // One open authorization per order; a new attempt may start once the previous one is final.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: [
          { key: OrderIdAttribute, value: orderId },
          { key: PayerAttribute, value: payer },
          { key: AuthorizationStateAttribute, value: 'drafting' },
          ...(value <= BigInt(Number.MAX_SAFE_INTEGER) ? [{ key: AmountMinorAttribute, value: Number(value) }] : []),
        ],
      });
      runId = handle.firstExecutionRunId;
    } catch (err) {
      const error = toAuthcapError(err);
      if (error.code === 'order_has_open_authorization') {
        const open = await this.temporal.workflow.getHandle(workflowId).describe();
        throw new AuthcapError('order_has_open_authorization', `order ${orderId} already has an open authorization`, {
          id: resourceId(orderId, open.runId),
        });
      }
      throw error;
    }
    const view = await this.call(() => this.temporal.workflow.getHandle(workflowId, runId).executeUpdate(draftReadyUpdate));
    return { id: resourceId(orderId, runId), ...view };
  }

  async getAuthorization(id: string): Promise<AuthorizationResource> {
    const view = await this.call(() => this.handle(id).query(statusQuery));
    return { id, ...view };
  }

  /** Stores the payer's signature after checking it against the exact draft. */
  async submitSignature(id: string, signature: string): Promise<AuthorizationResource> {
    const parsed = parseSignature(signature) as Hex;
    const handle = this.handle(id);
    const view = await this.command(handle, 'accept a signature', () => handle.executeUpdate(submitSignatureUpdate, { args: [{ signature: parsed }] }));
    return { id, ...view };
  }

  /**
   * Captures now. Waits up to `waitMs` for the capture to reach the confirmation depth; past that it
   * returns `settled: false` and the capture carries on in the workflow.
   */
  async capture(id: string, options: { waitMs?: number } = {}): Promise<CaptureOutcome> {
    const handle = this.handle(id);
    const update = await this.command(handle, 'capture', () => handle.startUpdate(captureUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED }));
    const waitMs = options.waitMs ?? 15_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), waitMs);
    });
    try {
      const view = await this.call(() => Promise.race([update.result(), timedOut]));
      if (view) return { authorization: { id, ...view }, settled: true };
      return { authorization: await this.getAuthorization(id), settled: false };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Relays the payer's CancelAuthorization signature; resolves once the cancellation is onchain. */
  async cancel(id: string, signature: string): Promise<AuthorizationResource> {
    const parsed = parseSignature(signature) as Hex;
    const handle = this.handle(id);
    const view = await this.command(handle, 'cancel', () => handle.executeUpdate(cancelUpdate, { args: [{ signature: parsed }] }));
    return { id, ...view };
  }

  /** Lists authorizations from Temporal visibility (search attributes), newest first. */
  async list(request: ListRequest = {}): Promise<AuthorizationSummary[]> {
    const clauses = [`WorkflowType = '${WORKFLOW_TYPE}'`];
    if (request.orderId !== undefined) clauses.push(`OrderId = ${quote(parseOrderId(request.orderId))}`);
    const state = parseState(request.state);
    if (state) clauses.push(`AuthorizationState = ${quote(state)}`);
    if (request.payer !== undefined) clauses.push(`Payer = ${quote(parseAddress(request.payer, 'payer'))}`);
    const limit = request.limit ?? 20;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) {
      throw new AuthcapError('validation_error', 'limit must be a whole number from 1 to 100');
    }
    const summaries: AuthorizationSummary[] = [];
    const executions = this.temporal.workflow.list({ query: clauses.join(' AND '), pageSize: limit });
    for await (const execution of executions) {
      const attrs = execution.typedSearchAttributes;
      const orderId = attrs.get(OrderIdAttribute) ?? execution.workflowId.replace(/^authorization-/, '');
      const amount = attrs.get(AmountMinorAttribute);
      const validBefore = attrs.get(ValidBeforeAttribute);
      summaries.push({
        id: resourceId(orderId, execution.runId),
        orderId,
        state: attrs.get(AuthorizationStateAttribute) ?? 'unknown',
        payer: attrs.get(PayerAttribute) ?? null,
        amountMinor: amount === undefined ? null : String(amount),
        validBefore: validBefore ? validBefore.toISOString() : null,
        createdAt: execution.startTime.toISOString(),
      });
      if (summaries.length >= limit) break;
    }
    return summaries;
  }

  /** The id of the newest authorization attempt for an order (open or not). */
  async idForOrder(orderId: string): Promise<string> {
    const parsed = parseOrderId(orderId);
    const description = await this.call(() => this.temporal.workflow.getHandle(workflowIdForOrder(parsed)).describe());
    return resourceId(parsed, description.runId);
  }

  /** Voids offchain: authcap never submits this authorization afterwards. */
  async voidAuthorization(id: string, request: { reason: string; by?: string }): Promise<AuthorizationResource> {
    if (typeof request?.reason !== 'string' || !request.reason.trim()) {
      throw new AuthcapError('validation_error', 'reason is required to void an authorization');
    }
    const args = [{ reason: request.reason.trim(), by: request.by?.trim() || 'merchant' }] as const;
    const handle = this.handle(id);
    const view = await this.command(handle, 'void', () => handle.executeUpdate(voidUpdate, { args: [...args] }));
    return { id, ...view };
  }

  private handle(id: string): WorkflowHandle {
    const parsed = parseResourceId(String(id));
    if (!parsed) throw new AuthcapError('not_found', `no authorization with id ${id}`);
    return this.temporal.workflow.getHandle(parsed.workflowId, parsed.runId);
  }

  /**
   * Runs an update. Temporal answers an update to a finished workflow with "not found"; callers
   * need to hear that the authorization exists but is final, so that becomes invalid_state.
   */
  private async command<T>(handle: WorkflowHandle, action: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await this.call(fn);
    } catch (err) {
      if (!(err instanceof AuthcapError) || err.code !== 'not_found') throw err;
      const view = await this.call(() => handle.query(statusQuery));
      throw new AuthcapError('invalid_state', `cannot ${action}: the authorization is ${view.state}`);
    }
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toAuthcapError(err);
    }
  }
}

/** A string literal for a visibility query. */
function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export type { AuthorizationResource, AuthorizationView };
