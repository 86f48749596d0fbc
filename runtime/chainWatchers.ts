// Each network's log watcher workflow (workflows/chainWatcher.ts) is started by every worker that
// comes up with watching on, and checked again every minute: starting one that runs already changes
// nothing, so there is one. A watcher that ended (an operator terminated it) is started again from
// the block its last run had recorded, so the blocks between are still read.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { CHAIN_WATCHER_WORKFLOW_TYPE, chainWatcherWorkflowId, type ChainWatchInput } from '../domain/chainWatcher.js';

export async function ensureChainWatcher(client: Client, taskQueue: string, network: string): Promise<void> {
  const workflowId = chainWatcherWorkflowId(taskQueue, network);
  const last = await client.workflow
    .getHandle(workflowId)
    .describe()
    .catch((err: unknown) => {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    });
  if (last?.status.name === 'RUNNING') return;
  const lastBlock = (last?.memo?.watcher as { lastBlock?: string } | undefined)?.lastBlock;
  await client.workflow.start(CHAIN_WATCHER_WORKFLOW_TYPE, {
    workflowId,
    taskQueue,
    args: [{ network, ...(lastBlock !== undefined ? { lastBlock } : {}) } satisfies ChainWatchInput],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}
