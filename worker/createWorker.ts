// Builds the authcap worker: workflows bundled from workflows/, activities bound to the chain.
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { createActivities, createChainContext, type ChainConfig } from '../activities/index.js';
import type { TemporalSettings } from '../runtime/temporal.js';

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface AuthcapWorkerOptions {
  temporal: TemporalSettings;
  chain: ChainConfig;
  /** A prebuilt bundle (tests build one per run); by default the worker bundles workflows/ itself. */
  workflowBundle?: WorkflowBundleOption;
}

export interface AuthcapWorker {
  worker: Worker;
  connection: NativeConnection;
  /** Runs until shutdown() is called. */
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

export async function createAuthcapWorker(options: AuthcapWorkerOptions): Promise<AuthcapWorker> {
  const chain = await createChainContext(options.chain);
  const connection = await NativeConnection.connect(options.temporal.connectionOptions);
  const worker = await Worker.create({
    connection,
    namespace: options.temporal.namespace,
    taskQueue: options.temporal.taskQueue,
    activities: createActivities(chain),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath }),
  });
  let running: Promise<void> | undefined;
  return {
    worker,
    connection,
    run() {
      running ??= worker.run();
      return running;
    },
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running?.catch(() => undefined);
      await connection.close();
    },
  };
}
