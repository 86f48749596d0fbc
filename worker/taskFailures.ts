// A workflow whose task keeps failing (or timing out) is retried by Temporal forever without a word
// to anyone: its updates hang, its deadline never fires. The SDK reports each failed activation to
// the runtime logger; this turns those reports into a metric, one loud log line per workflow, and the
// list the worker's /readyz shows operators.
import type { LogLevel, LogMetadata, Logger } from '@temporalio/worker';
import { Counter, Gauge } from 'prom-client';
import { registry } from '../runtime/metrics.js';
// The bundle's entry: each export is a registered workflow type (its code is only imported when called).
import * as registeredWorkflows from '../workflows/index.js';

/** A workflow counts as failing while its last failed task is this recent (Temporal retries every ~10 s). */
const FAILING_WINDOW_MS = 2 * 60_000;
/** Failures in a row before the loud log line: one failure is often a worker restart or a lost race. */
const LOUD_AFTER = 2;
const MAX_TRACKED = 1_000;

export interface FailingWorkflow {
  workflowId: string;
  runId: string;
  workflowType: string;
  failures: number;
  firstAt: string;
  lastAt: string;
}

const failuresTotal = new Counter({
  name: 'authcap_workflow_task_failures_total',
  help: 'Workflow tasks this worker failed (Temporal retries them), by workflow type.',
  labelNames: ['workflow_type'] as const,
  registers: [registry],
});

const trackers = new Set<TaskFailureTracker>();

new Gauge({
  name: 'authcap_workflows_with_failing_tasks',
  help: 'Workflows whose last workflow task on this worker failed within the last 2 minutes.',
  registers: [registry],
  collect() {
    this.set([...trackers].reduce((sum, tracker) => sum + tracker.failing().length, 0));
  },
});

export class TaskFailureTracker {
  private readonly byRun = new Map<string, FailingWorkflow & { lastMs: number }>();

  constructor(
    private readonly report: (message: string, meta: Record<string, unknown>) => void,
    private readonly now: () => number = Date.now,
  ) {
    trackers.add(this);
    // At zero from the start, so increase() over it sees a type's first failed task.
    for (const workflowType of Object.keys(registeredWorkflows)) failuresTotal.inc({ workflow_type: workflowType }, 0);
  }

  /** Reads one SDK log entry; acts only on the worker's report of a failed activation. */
  observe(level: LogLevel, message: string, meta: LogMetadata | undefined): void {
    if (level !== 'WARN' || message !== 'Workflow failed' || meta?.sdkComponent !== 'worker') return;
    const workflowId = String(meta.workflowId ?? '');
    const runId = String(meta.runId ?? '');
    if (!workflowId) return;
    const workflowType = String(meta.workflowType ?? 'unknown');
    failuresTotal.inc({ workflow_type: workflowType });
    const now = this.now();
    const previous = this.byRun.get(runId);
    const stillFailing = previous && now - previous.lastMs <= FAILING_WINDOW_MS;
    const entry = {
      workflowId,
      runId,
      workflowType,
      failures: stillFailing ? previous.failures + 1 : 1,
      firstAt: stillFailing ? previous.firstAt : new Date(now).toISOString(),
      lastAt: new Date(now).toISOString(),
      lastMs: now,
    };
    this.byRun.delete(runId);
    this.byRun.set(runId, entry);
    if (this.byRun.size > MAX_TRACKED) this.byRun.delete(this.byRun.keys().next().value!);
    if (entry.failures === LOUD_AFTER || (entry.failures > LOUD_AFTER && entry.failures % 30 === 0)) {
      this.report('workflow task keeps failing: Temporal retries it, and its updates and timers wait until it succeeds', {
        workflowId,
        runId,
        workflowType,
        failures: entry.failures,
        since: entry.firstAt,
      });
    }
  }

  /** Workflows failing now, most recent first. */
  failing(): FailingWorkflow[] {
    const now = this.now();
    return [...this.byRun.values()]
      .filter((entry) => now - entry.lastMs <= FAILING_WINDOW_MS)
      .reverse()
      .map(({ lastMs: _lastMs, ...entry }) => entry);
  }
}

/** The runtime logger, with every entry also shown to the tracker. */
export function trackingLogger(inner: Logger, tracker: TaskFailureTracker): Logger {
  const at = (level: LogLevel) => (message: string, meta?: LogMetadata) => {
    tracker.observe(level, message, meta);
    inner.log(level, message, meta);
  };
  return {
    log: (level, message, meta) => at(level)(message, meta),
    trace: at('TRACE'),
    debug: at('DEBUG'),
    info: at('INFO'),
    warn: at('WARN'),
    error: at('ERROR'),
  };
}
