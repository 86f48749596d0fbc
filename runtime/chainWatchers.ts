// Each network's log watcher workflow (workflows/chainWatcher.ts) is started by every worker that
// comes up with watching on: starting one that runs already changes nothing, so there is one.
import type { Client } from '@temporalio/client';
import { CHAIN_WATCHER_WORKFLOW_TYPE, chainWatcherWorkflowId, type ChainWatchInput } from '../domain/chainWatcher.js';

export async function ensureChainWatcher(client: Client, taskQueue: string, network: string): Promise<void> {
  await client.workflow.start(CHAIN_WATCHER_WORKFLOW_TYPE, {
    workflowId: chainWatcherWorkflowId(taskQueue, network),
    taskQueue,
    args: [{ network } satisfies ChainWatchInput],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}
