// One log watcher per network and task queue, whichever worker runs it: a workflow whose long-running
// activity watches the chain and heartbeats its place (worker/chainWatchActivity.ts). Its cursor lives
// in Temporal (the activity's heartbeats, then the workflow's history), never on a worker's disk.

export interface ChainWatchInput {
  /** CAIP-2 id of the network watched. */
  network: string;
  /** The last block fully handled (decimal), or absent: the activity starts from the head. */
  lastBlock?: string;
}

export interface ChainWatchRun {
  lastBlock?: string;
}

/** What the watcher's activity heartbeats: its cursor, so a retry on another worker goes on from there. */
export interface ChainWatchProgress {
  lastBlock?: string;
}

export interface ChainWatchActivities {
  watchChainLogs(input: ChainWatchInput): Promise<ChainWatchRun>;
}

export const CHAIN_WATCHER_WORKFLOW_TYPE = 'chainWatcherWorkflow';

/**
 * Per task queue too: deployments sharing a namespace (and a chain id, as anvils do) each have their own.
 * Readable in the Temporal UI: `chain-watcher/authcap/eip155:8453`.
 */
export function chainWatcherWorkflowId(taskQueue: string, network: string): string {
  return `chain-watcher/${taskQueue}/${network}`;
}
