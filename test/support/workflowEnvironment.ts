// authcap's workflows on a Temporal dev server of the test's own, with stub activities: what the
// workflow code does with what the chain says, without a chain, a relayer or the stack. The server is
// the Temporal CLI as the dev stack finds it (TEMPORAL_CLI_PATH, `temporal` on PATH, or the cached
// build: devstack/temporalCli.ts); nothing is downloaded. The workflows run from the same bundle and
// interceptors as the worker's, on a task queue of the test's (and its follow queue, where captures and
// refunds are followed). Payloads are plain: no codec, so nothing is sealed and nothing is refused for it.
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleAuthcapWorkflows } from '../../worker/workflowBundle.js';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { resolveTemporalCli } from '../../devstack/temporalCli.js';
import type { AuthorizationActivities } from '../../domain/activityContract.js';
import { searchAttributeKeys } from '../../domain/searchAttributes.js';
import { followTaskQueue } from '../../domain/taskQueues.js';
import { telemetrySinks } from '../../worker/telemetry.js';

export interface WorkflowTestEnvironment {
  client: Client;
  taskQueue: string;
  teardown(): Promise<void>;
}

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

/** A dev server with authcap's search attributes, and workers running the workflows with these activities. */
export async function startWorkflowEnvironment(activities: Partial<AuthorizationActivities>): Promise<WorkflowTestEnvironment> {
  // Workers' lifecycle lines are noise here; warnings and errors still show. Each test file is its own process.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const path = await resolveTemporalCli(() => undefined);
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path }, searchAttributes: [...searchAttributeKeys], log: { format: 'pretty', level: 'error' } },
  });
  const workflowBundle = await bundleAuthcapWorkflows({
    workflowsPath: fileURLToPath(new URL('../../workflows/index.ts', import.meta.url)),
    workflowInterceptorModules: [fileURLToPath(new URL('../../workflows/interceptors.ts', import.meta.url))],
    logger: quiet as never,
  });
  const taskQueue = `workflow-tests-${process.pid}`;
  const connection = env.nativeConnection;
  const workers = await Promise.all([
    Worker.create({ connection, taskQueue, workflowBundle, activities, sinks: telemetrySinks() }),
    Worker.create({ connection, taskQueue: followTaskQueue(taskQueue), activities }),
  ]);
  const running = Promise.all(workers.map((worker) => worker.run()));
  return {
    client: env.client,
    taskQueue,
    async teardown() {
      for (const worker of workers) worker.shutdown();
      await running;
      await env.teardown();
    },
  };
}
