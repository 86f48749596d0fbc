// The typed client library order services use. Every method validates its input before anything
// reaches Temporal, and every failure is an AuthcapError with a stable code.
import { Client, Connection, WorkflowUpdateStage, type WorkflowHandle } from '@temporalio/client';
import type { Hex } from 'viem';
import { parseAddress, parseSignature } from '../domain/address.js';
import { parseAmount } from '../domain/amount.js';
import type { AuthorizationResource, AuthorizationView, AuthorizationWorkflowInput } from '../domain/authorization.js';
import { AuthcapError } from '../domain/errors.js';
import {
  AmountMinorAttribute, AuthorizationStateAttribute, OrderIdAttribute, PayerAttribute,
} from '../domain/searchAttributes.js';
import { loadTemporalSettings, type TemporalSettings } from '../runtime/temporal.js';
import {
  WORKFLOW_TYPE, captureUpdate, draftReadyUpdate, statusQuery, submitSignatureUpdate, voidUpdate,
} from '../workflows/messages.js';
import { parseResourceId, resourceId, workflowIdForOrder } from './ids.js';
import { toAuthcapError } from './temporalErrors.js';

export interface CreateAuthorizationRequest {
  orderId: string;
  /** The payer's address. */
  payer: string;
  /** Decimal token amount with at most 6 decimals, e.g. "12.50". */
  amount: string | number;
}

export interface CaptureOutcome {
  authorization: AuthorizationResource;
  /** False when the capture was still in flight after the wait: poll `get` for the outcome. */
  settled: boolean;
}

const MAX_ORDER_ID_LENGTH = 200;

export class AuthcapClient {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  static async connect(settings: TemporalSettings = loadTemporalSettings()): Promise<AuthcapClient> {
    const connection = await Connection.connect(settings.connectionOptions);
    return new AuthcapClient(new Client({ connection, namespace: settings.namespace }), settings.taskQueue);
  }

  async close(): Promise<void> {
    await this.temporal.connection.close();
  }

  /** Drafts a new authorization for the payer to sign; resolves once its typed data exists. */
  async createAuthorization(request: CreateAuthorizationRequest): Promise<AuthorizationResource> {
    const orderId = parseOrderId(request?.orderId);
    const payer = parseAddress(request?.payer, 'payer');
    const value = parseAmount(request?.amount);
    const input: AuthorizationWorkflowInput = { orderId, draft: { payer, value: value.toString() } };
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
    const view = await this.call(() => handle.executeUpdate(submitSignatureUpdate, { args: [{ signature: parsed }] }));
    return { id, ...view };
  }

  /**
   * Captures now. Waits up to `waitMs` for the capture to reach the confirmation depth; past that it
   * returns `settled: false` and the capture carries on in the workflow.
   */
  async capture(id: string, options: { waitMs?: number } = {}): Promise<CaptureOutcome> {
    const handle = this.handle(id);
    const update = await this.call(() => handle.startUpdate(captureUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED }));
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

  /** Voids offchain: authcap never submits this authorization afterwards. */
  async voidAuthorization(id: string, request: { reason: string; by?: string }): Promise<AuthorizationResource> {
    if (typeof request?.reason !== 'string' || !request.reason.trim()) {
      throw new AuthcapError('validation_error', 'reason is required to void an authorization');
    }
    const args = [{ reason: request.reason.trim(), by: request.by?.trim() || 'merchant' }] as const;
    const view = await this.call(() => this.handle(id).executeUpdate(voidUpdate, { args: [...args] }));
    return { id, ...view };
  }

  private handle(id: string): WorkflowHandle {
    const parsed = parseResourceId(String(id));
    if (!parsed) throw new AuthcapError('not_found', `no authorization with id ${id}`);
    return this.temporal.workflow.getHandle(parsed.workflowId, parsed.runId);
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toAuthcapError(err);
    }
  }
}

function parseOrderId(input: unknown): string {
  if (typeof input !== 'string' || !input.trim()) throw new AuthcapError('validation_error', 'orderId is required');
  if (input.length > MAX_ORDER_ID_LENGTH) {
    throw new AuthcapError('validation_error', `orderId is longer than ${MAX_ORDER_ID_LENGTH} characters`);
  }
  return input;
}

export type { AuthorizationResource, AuthorizationView };
