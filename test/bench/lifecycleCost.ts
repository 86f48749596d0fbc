// What one whole lifecycle (create → sign → store → capture → captured) costs Temporal, summed over
// every workflow it causes: its own authorization workflow (every run), the children it starts, if
// any (a pre-signed authorization's nonce claim `nonce-<key>`, every run), and its share of the workflows that serve every lifecycle at once: the merchant
// relayer and each webhook endpoint's dispatcher (their events recorded in the phase's window ÷ the
// phase's lifecycles, every run of theirs that overlaps it). Read from the recorded histories.
import { Client } from '@temporalio/client';
import { connectTemporal } from './temporalConnection.js';
import proto, { type temporal } from '@temporalio/proto';
import { parseResourceId } from '../../domain/ids.js';
import { WEBHOOK_DISPATCH_WORKFLOW_TYPE } from '../../domain/webhookDispatch.js';
import { pool } from './stats.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = proto.temporal.api.enums.v1.EventType;
const RELAYER_TYPE = 'merchantRelayerWorkflow';
/** Workflows that serve every lifecycle at once: each one's events in a phase are shared by its lifecycles. */
const SHARED_TYPES = [RELAYER_TYPE, WEBHOOK_DISPATCH_WORKFLOW_TYPE] as const;

export interface TemporalFigures {
  /** Workflow tasks completed, failed or timed out. */
  workflowTasks: number;
  /** Activity attempts (the `attempt` of each ActivityTaskStarted: retries are not events of their own). */
  activityTasks: number;
  /** MarkerRecorded named core_local_activity. */
  localActivities: number;
  historyEvents: number;
  /** Protobuf-encoded size of the events, as the server stores them (payloads encrypted by the codec). */
  historyBytes: number;
  /** WorkflowPropertiesModified: memo upserts, which Temporal Cloud's list of actions does not name. */
  memoUpserts: number;
  /** Temporal Cloud billable actions estimated from history (see ACTION_RULES). */
  actions: number;
  actionsByKind: Record<string, number>;
}

export interface TemporalPerLifecycle {
  /** Lifecycles whose workflows were read (the relayer's and dispatchers' shares are over all of the phase's). */
  sampled: number;
  /** Per lifecycle, by workflow type; the relayer's and the webhook dispatchers' rows are their shares. */
  byWorkflow: Record<string, TemporalFigures>;
  total: TemporalFigures;
}

/**
 * Which history events count as which action, after Temporal Cloud's "Actions" page
 * (docs.temporal.io/cloud/actions). Not in history, so not counted: queries (GET reads the memo by
 * describe, no query), activity heartbeats, rejected updates.
 */
export const ACTION_RULES: Record<string, string> = {
  'workflow started':
    "WorkflowExecutionStarted of a run started by a client or by continue-as-new (a child's is counted by its parent; a signal-with-start start is its signal's one action)",
  'child workflow': 'StartChildWorkflowExecutionInitiated, 2 each (the start and the execution)',
  signal: 'WorkflowExecutionSignaled, in the receiving history (from a client, signal-with-start or another workflow)',
  update: 'WorkflowExecutionUpdateAccepted',
  timer: 'TimerStarted (condition() with a timeout included)',
  'activity attempt': 'ActivityTaskStarted, its attempt number (each start or retry)',
  'markers (per workflow task)': 'MarkerRecorded (local activities, patches): 1 per workflow task that recorded any',
  'search attribute upsert': 'UpsertWorkflowSearchAttributes, unless it sets TemporalChangeVersion only',
  'workflow options updated': 'WorkflowExecutionOptionsUpdated',
};

const ms = (e: HistoryEvent) => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);

export function emptyFigures(): TemporalFigures {
  return { workflowTasks: 0, activityTasks: 0, localActivities: 0, historyEvents: 0, historyBytes: 0, memoUpserts: 0, actions: 0, actionsByKind: {} };
}

/** Adds one run's events (or the part of them in a window) to `f`. */
export function addEvents(f: TemporalFigures, events: HistoryEvent[]): void {
  const action = (kind: string, n = 1) => {
    f.actions += n;
    f.actionsByKind[kind] = (f.actionsByKind[kind] ?? 0) + n;
  };
  const markerTasks = new Set<string>();
  events.forEach((e, i) => {
    f.historyEvents += 1;
    // A history is its events as a repeated field: the sizes add up to History.encode(history) exactly.
    f.historyBytes += proto.temporal.api.history.v1.History.encode({ events: [e] }).finish().length;
    switch (e.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
      case EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
      case EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
        f.workflowTasks += 1;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: {
        const a = e.workflowExecutionStartedEventAttributes;
        const signalWithStart = !a?.continuedExecutionRunId && events[i + 1]?.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED;
        if (!a?.parentWorkflowExecution && !signalWithStart) action('workflow started');
        break;
      }
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
        action('child workflow', 2);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        action('signal');
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        action('update');
        break;
      case EventType.EVENT_TYPE_TIMER_STARTED:
        action('timer');
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const attempts = Math.max(1, e.activityTaskStartedEventAttributes?.attempt ?? 1);
        f.activityTasks += attempts;
        action('activity attempt', attempts);
        break;
      }
      case EventType.EVENT_TYPE_MARKER_RECORDED: {
        const a = e.markerRecordedEventAttributes;
        if (a?.markerName === 'core_local_activity') f.localActivities += 1;
        const task = String(a?.workflowTaskCompletedEventId ?? e.eventId);
        if (!markerTasks.has(task)) action('markers (per workflow task)');
        markerTasks.add(task);
        break;
      }
      case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
        const keys = Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {});
        if (keys.some((k) => k !== 'TemporalChangeVersion')) action('search attribute upsert');
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED:
        action('workflow options updated');
        break;
      case EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
        f.memoUpserts += 1;
        break;
      default:
        break;
    }
  });
}

function scaled(f: TemporalFigures, per: number): TemporalFigures {
  const r = (v: number) => Math.round((v / Math.max(1, per)) * 10) / 10;
  return {
    workflowTasks: r(f.workflowTasks),
    activityTasks: r(f.activityTasks),
    localActivities: r(f.localActivities),
    historyEvents: r(f.historyEvents),
    historyBytes: Math.round(f.historyBytes / Math.max(1, per)),
    memoUpserts: r(f.memoUpserts),
    actions: r(f.actions),
    actionsByKind: Object.fromEntries(
      Object.entries(f.actionsByKind)
        .map(([k, v]) => [k, r(v)])
        .sort(([, a], [, b]) => (b as number) - (a as number)),
    ),
  };
}

function sum(all: TemporalFigures[]): TemporalFigures {
  const out = emptyFigures();
  for (const f of all) {
    for (const k of ['workflowTasks', 'activityTasks', 'localActivities', 'historyEvents', 'historyBytes', 'memoUpserts', 'actions'] as const) out[k] += f[k];
    for (const [kind, n] of Object.entries(f.actionsByKind)) out.actionsByKind[kind] = (out.actionsByKind[kind] ?? 0) + n;
  }
  return out;
}

/** Every run of one workflow execution chain, from `runId` on (continue-as-new followed). */
export async function runsOf(client: Client, workflowId: string, runId: string | undefined): Promise<HistoryEvent[][]> {
  const runs: HistoryEvent[][] = [];
  for (let next = runId; next !== undefined && runs.length < 100; ) {
    const events = (await client.workflow.getHandle(workflowId, next).fetchHistory()).events ?? [];
    runs.push(events);
    const last = events.at(-1);
    next =
      last?.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
        ? (last.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined)
        : undefined;
  }
  return runs;
}

/** A workflow whose cost is counted: its first run (undefined: its first, found by describe). */
export interface WorkflowRoot {
  workflowId: string;
  runId?: string;
}

/** A workflow and every workflow it started as a child, by workflow type. */
async function treeFigures(client: Client, root: WorkflowRoot, into: Map<string, TemporalFigures>): Promise<void> {
  let runId = root.runId;
  if (runId === undefined) {
    // The raw call: the handle's describe would decode the memo, which the codec encrypted.
    const described = await client.workflowService.describeWorkflowExecution({
      namespace: client.options.namespace,
      execution: { workflowId: root.workflowId },
    });
    const info = described.workflowExecutionInfo;
    runId = info?.firstRunId || info?.execution?.runId || '';
  }
  const todo: { workflowId: string; runId: string }[] = [{ workflowId: root.workflowId, runId }];
  const seen = new Set<string>();
  for (let w = todo.pop(); w; w = todo.pop()) {
    if (seen.has(w.workflowId)) continue;
    seen.add(w.workflowId);
    const runs = await runsOf(client, w.workflowId, w.runId);
    const type = runs[0]?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
    const f = into.get(type) ?? emptyFigures();
    into.set(type, f);
    for (const events of runs) {
      addEvents(f, events);
      for (const e of events) {
        const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
        if (e.eventType === EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED && child?.workflowId) {
          todo.push({ workflowId: child.workflowId, runId: child.runId ?? '' });
        }
      }
    }
  }
}

/**
 * Temporal figures per lifecycle: the sampled lifecycles' own workflows, averaged, plus the relayer's
 * and the webhook dispatchers' events between `window.startMs` and `window.endMs` divided by `lifecycles`.
 */
export async function temporalPerLifecycle(options: {
  address: string;
  namespace: string;
  sampledIds: string[];
  lifecycles: number;
  window: { startMs: number; endMs: number };
}): Promise<TemporalPerLifecycle> {
  const roots = options.sampledIds.map((id) => {
    const parsed = parseResourceId(id);
    if (!parsed) throw new Error(`not a resource id: ${id}`);
    return { workflowId: parsed.workflowId, runId: parsed.runId };
  });
  return temporalPerUnit({ ...options, sampledRoots: roots, units: options.lifecycles });
}

/**
 * The same for any unit of work (a refund, say): the workflows it starts (`sampledRoots`, each with
 * the children it starts), averaged over the sample, plus the relayer's and the webhook dispatchers'
 * events in the window ÷ `units`.
 */
export async function temporalPerUnit(options: {
  address: string;
  namespace: string;
  sampledRoots: WorkflowRoot[];
  units: number;
  window: { startMs: number; endMs: number };
}): Promise<TemporalPerLifecycle> {
  const connection = await connectTemporal(options.address);
  try {
    const client = new Client({ connection, namespace: options.namespace });
    const own = new Map<string, TemporalFigures>();
    await pool(options.sampledRoots, 4, (root) => treeFigures(client, root, own));
    const byWorkflow: Record<string, TemporalFigures> = {};
    for (const [type, f] of own) byWorkflow[type] = scaled(f, options.sampledRoots.length);
    for (const type of SHARED_TYPES) {
      const shared = await windowFigures(client, type, options.window);
      // The relayer's row always (it was always there); a dispatcher's only when an endpoint has one.
      if (type === RELAYER_TYPE || shared.runs > 0) byWorkflow[type] = scaled(shared.figures, options.units);
    }
    // The total is the sum of the rounded rows, so the table adds up as printed.
    const total = sum(Object.values(byWorkflow));
    return { sampled: options.sampledRoots.length, byWorkflow, total: scaled(total, 1) };
  } finally {
    await connection.close();
  }
}

/**
 * The events every run of one workflow type recorded between `startMs` and `endMs`: each run that
 * overlaps the window, as visibility lists them (a continued-as-new chain is one row per run).
 */
async function windowFigures(client: Client, type: string, window: { startMs: number; endMs: number }): Promise<{ figures: TemporalFigures; runs: number }> {
  const figures = emptyFigures();
  const { startMs, endMs } = window;
  let runs = 0;
  const time = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : undefined;
  // The raw call: the client's list would decode each run's memo, which the codec encrypted (the
  // dispatcher keeps its progress there), and the bench has no key.
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listWorkflowExecutions({
      namespace: client.options.namespace,
      query: `WorkflowType = '${type}'`,
      nextPageToken,
    });
    for (const run of page.executions ?? []) {
      const started = time(run.startTime) ?? 0;
      const closed = time(run.closeTime);
      if (started > endMs || (closed !== undefined && closed < startMs)) continue;
      runs += 1;
      const events = (await client.workflow.getHandle(run.execution?.workflowId ?? '', run.execution?.runId ?? undefined).fetchHistory()).events ?? [];
      addEvents(
        figures,
        events.filter((e) => ms(e) >= startMs && ms(e) <= endMs),
      );
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return { figures, runs };
}

/** Up to `max` items spread evenly over `items` (not just the first, which ran on an idle stack). */
export function spread<T>(items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items];
  return Array.from({ length: max }, (_, i) => items[Math.floor((i * items.length) / max)]!);
}
