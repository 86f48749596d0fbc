// The client library's one way to Temporal: the connection, the readiness probe, and the two kinds of
// bounded call (a server call, a call that needs a worker), each failing with authcap's stable codes
// (deadlines.ts, errors.ts). Resources never open a connection or translate a Temporal error
// themselves: they name the operation, the transport bounds it and says what a missed bound means.
import { Client, Connection, type ClientPlugin, type WorkflowClient, type WorkflowExecutionDescription } from '@temporalio/client';
import { AuthcapError } from '../../domain/errors.js';
import type { TemporalSettings } from '../../runtime/temporal.js';
import { closeWhenSettled, serverCall, withDeadline, workerCall } from './deadlines.js';
import { describeRun, type DescribedRun } from './describedRun.js';
import { historyChanges, type RecordChange } from './historyLongPoll.js';

export interface ReadinessCheck {
  ok: boolean;
  detail?: string;
}

export interface Readiness {
  temporal: ReadinessCheck;
  worker: ReadinessCheck;
}

/** How long a ping may take: a readiness probe and a worker call's "is the server there" look. */
const PING_MS = 2_000;

export class TemporalTransport {
  constructor(
    /** The SDK's client, for the calls below and the handles and updates the resources send through them. */
    readonly temporal: Client,
    /** The worker's task queue: new workflows start there. */
    readonly taskQueue: string,
  ) {}

  /** `plugins`: Temporal client plugins, such as the tracing one an entry made (runtime/tracing.ts). */
  static async connect(settings: TemporalSettings, options: { plugins?: ClientPlugin[] } = {}): Promise<TemporalTransport> {
    const connection = await Connection.connect(settings.connectionOptions);
    const client = new Client({ connection, namespace: settings.namespace, dataConverter: settings.dataConverter, plugins: options.plugins ?? [] });
    return new TemporalTransport(client, settings.taskQueue);
  }

  get workflow(): WorkflowClient {
    return this.temporal.workflow;
  }

  get namespace(): string {
    return this.temporal.options.namespace;
  }

  /** A server call: `temporal_unavailable` when it does not answer in time (deadlines.ts). */
  server<T>(fn: () => Promise<T>, ms?: number): Promise<T> {
    return serverCall(this.temporal, fn, ms);
  }

  /** A call that needs a worker: `worker_unavailable` when Temporal answers but no worker does (deadlines.ts). */
  worker<T>(fn: () => Promise<T>, ms?: number): Promise<T> {
    return workerCall(this.temporal, () => this.ping(), fn, ms);
  }

  /** A workflow's run (the latest without `runId`), as the SDK describes it. */
  describe(workflowId: string, runId?: string): Promise<WorkflowExecutionDescription> {
    return this.server(() => this.workflow.getHandle(workflowId, runId).describe());
  }

  /** Like describe, but undefined when no such workflow exists. */
  async describeIfExists(workflowId: string, runId?: string): Promise<WorkflowExecutionDescription | undefined> {
    try {
      return await this.describe(workflowId, runId);
    } catch (err) {
      if (err instanceof AuthcapError && err.code === 'not_found') return undefined;
      throw err;
    }
  }

  /** A run as a read needs it: the raw describe, its memo decoded only for the keys asked (describedRun.ts). */
  describeRun(workflowId: string, runId?: string): Promise<DescribedRun> {
    return this.server(() => describeRun(this.temporal, workflowId, runId));
  }

  /** The changes of an attempt's history, as Temporal's long poll delivers them (historyLongPoll.ts). */
  historyChanges(id: string, signal: AbortSignal): AsyncGenerator<RecordChange> {
    return historyChanges(this.temporal, id, signal);
  }

  /** Temporal's cheapest call: whether the server answers at all. */
  ping(): Promise<unknown> {
    return withDeadline(this.temporal, PING_MS, () => this.temporal.workflowService.getSystemInfo({}));
  }

  /** Whether Temporal answers and a worker is polling the task queue. */
  async readiness(): Promise<Readiness> {
    const temporal = await this.ping().then(
      () => ({ ok: true }),
      (err: Error) => ({ ok: false, detail: err.message }),
    );
    if (!temporal.ok) return { temporal, worker: { ok: false, detail: 'Temporal is not reachable' } };
    const worker = await this.server(() =>
      this.temporal.workflowService.describeTaskQueue({
        namespace: this.namespace,
        // TASK_QUEUE_KIND_NORMAL and TASK_QUEUE_TYPE_WORKFLOW (the proto package is CommonJS: no named ESM enums).
        taskQueue: { name: this.taskQueue, kind: 1 },
        taskQueueType: 1,
      }),
    ).then(
      (answer) => {
        const pollers = answer.pollers ?? [];
        return pollers.length > 0 ? { ok: true } : { ok: false, detail: `no worker is polling task queue ${this.taskQueue}` };
      },
      (err: Error) => ({ ok: false, detail: err.message }),
    );
    return { temporal, worker };
  }

  /** Closes the connection once the calls still retrying inside the gRPC library have settled (deadlines.ts). */
  close(): Promise<void> {
    return closeWhenSettled(this.temporal);
  }
}
