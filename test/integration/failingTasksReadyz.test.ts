// Issue 15: a workflow whose task keeps failing is visible, not silent. The worker's tracker reads
// the SDK's report of each failed activation; its /readyz names the workflows, and the API's /readyz
// (public) reports how many, without making the API unready.
import { afterAll, describe, expect, it } from 'vitest';
import { TaskFailureTracker } from '../../worker/taskFailures.js';
import { startMetricsServer } from '../../worker/telemetry.js';
import { dev } from '../support/api.js';
import { startOwnApi } from '../support/ownApi.js';

describe('workflows whose tasks keep failing', () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });

  it("are counted on the worker's /readyz and /metrics, and reported by the API's /readyz", async () => {
    const logged: Record<string, unknown>[] = [];
    const tracker = new TaskFailureTracker((_message, meta) => logged.push(meta));
    const metrics = await startMetricsServer(0, '127.0.0.1', tracker);
    closers.push(() => new Promise((r) => metrics.server.close(() => r())));
    const readyz = metrics.url.replace(/\/metrics$/, '/readyz');
    const own = await startOwnApi('readyz', { rpcUrl: dev().rpcUrl, workerReadyzUrl: readyz });
    closers.push(() => own.close());
    const apiUrl = own.url;

    const apiReadyz = async () => (await (await fetch(`${apiUrl}/readyz`)).json()) as any;
    expect((await apiReadyz()).checks.workflowTasks).toEqual({ failing: 0 });

    // The SDK's report of a failed activation, twice in a row for the same run.
    const report = {
      sdkComponent: 'worker',
      taskQueue: 'authcap',
      namespace: 'default',
      workflowId: 'authorization-stuck-order',
      runId: 'run-1',
      workflowType: 'authorizationWorkflow',
      error: {},
    };
    tracker.observe('WARN', 'Workflow failed', report);
    tracker.observe('WARN', 'Workflow failed', report);
    expect(logged).toMatchObject([{ workflowId: 'authorization-stuck-order', failures: 2 }]);

    const worker = (await (await fetch(readyz)).json()) as any;
    expect(worker.failingWorkflows).toMatchObject([{ workflowId: 'authorization-stuck-order', runId: 'run-1', failures: 2 }]);
    const text = await (await fetch(metrics.url)).text();
    expect(text).toMatch(/authcap_workflow_task_failures_total\{workflow_type="authorizationWorkflow"\} 2/);
    expect(text).toMatch(/authcap_workflows_with_failing_tasks [1-9]/);

    const answer = await apiReadyz();
    expect(answer.status).toBe('ready');
    expect(answer.checks.workflowTasks).toMatchObject({ failing: 1 });
    // Public route: a count, never the workflow (and so order) ids.
    expect(JSON.stringify(answer)).not.toContain('stuck-order');
  });
});
