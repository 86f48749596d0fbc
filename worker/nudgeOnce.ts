// A watcher's nudge carries a request id made from the log it reports. Temporal keeps the request ids
// of the signals a run has received and drops a signal whose id it has seen: so a log nudges its
// workflow once, whichever watcher sends it and however often — a watcher moving to another worker
// scans again from its last heartbeated block, and the overlap is delivered a second time.
// (The SDK's handle.signal() makes a new request id each call, hence the service call here.)
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { encodeToPayloadsWithContext } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
import { nonceActivitySignal } from '../workflows/messages.js';

export interface Nudge {
  transactionHash: string;
  blockNumber: string;
  removed: boolean;
}

/** The same log (of the same block, added or removed) always gets the same id. */
export function nudgeRequestId(network: string, log: { transactionHash: string; logIndex: number | string; blockHash: string; removed: boolean }): string {
  const digest = createHash('sha256').update(`${network}\n${log.transactionHash}\n${log.logIndex}\n${log.blockHash}\n${log.removed}`).digest('hex');
  // UUID-shaped, as request ids usually are.
  return `${digest.slice(0, 8)}-${digest.slice(8, 12)}-${digest.slice(12, 16)}-${digest.slice(16, 20)}-${digest.slice(20, 32)}`;
}

export async function nudgeOnce(client: Client, execution: { workflowId: string; runId?: string }, nudge: Nudge, requestId: string): Promise<void> {
  // Sealed for the workflow it is sent to, as the SDK's own signal() would (runtime/codec.ts).
  const payloads = await encodeToPayloadsWithContext(
    client.workflow.options.loadedDataConverter,
    { type: 'workflow', namespace: client.options.namespace, workflowId: execution.workflowId },
    [nudge],
  );
  await client.workflowService.signalWorkflowExecution({
    namespace: client.options.namespace,
    identity: client.options.identity,
    workflowExecution: execution,
    signalName: nonceActivitySignal.name,
    input: { payloads },
    requestId,
  });
}
