// A network's log watcher, as a Temporal singleton: exactly one runs per network (its workflow id),
// its work is one long-running activity at a time on whichever worker is alive, and when that
// worker dies the activity's heartbeat stops, Temporal retries it on another worker within seconds,
// and it goes on from the block it last heartbeated. The workflow keeps that block between slices and
// across continue-as-new. Nothing per payment reaches it: its cost is a few events per slice.
import { continueAsNew, proxyActivities, upsertMemo, workflowInfo } from '@temporalio/workflow';
import type { ChainWatchActivities, ChainWatchInput } from '../domain/chainWatcher.js';
import { followTaskQueue } from '../domain/taskQueues.js';

const watch = () =>
  proxyActivities<ChainWatchActivities>({
    // The long waits' own slots (domain/taskQueues.ts): a slice runs for minutes.
    taskQueue: followTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: '15 minutes',
    // A dead worker is noticed after this long without a heartbeat; the activity heartbeats every 2 s.
    heartbeatTimeout: '8 seconds',
    // It never gives up: a node that is down is waited for.
    retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
  });

/** Slices per run (each about 5 minutes) before it continues as new: a short history whatever its age. */
const SLICES_PER_RUN = 100;

export async function chainWatcherWorkflow(input: ChainWatchInput): Promise<void> {
  let lastBlock = input.lastBlock;
  for (let slice = 0; slice < SLICES_PER_RUN && !workflowInfo().continueAsNewSuggested; slice += 1) {
    const run = await watch().watchChainLogs({ network: input.network, lastBlock });
    lastBlock = run.lastBlock ?? lastBlock;
    // For operators in the Temporal UI: how far the watcher has read.
    upsertMemo({ watcher: { network: input.network, lastBlock } });
  }
  await continueAsNew<typeof chainWatcherWorkflow>({ network: input.network, lastBlock });
}
