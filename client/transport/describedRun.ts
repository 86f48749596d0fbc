// One run of an authorization as a read needs it: a raw describe, whose memo is decoded only for the
// keys asked (an authorization also keeps its events there, which a read of the resource does not
// need), and a capture's progress from its follower's heartbeat.
import type { Client } from '@temporalio/client';
import { decodeArrayFromPayloads, decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
import type { CaptureOnchainProgress } from '../../domain/activityContract.js';
import { sealedEntries } from '../../domain/sealed.js';

/** WorkflowExecutionStatus CONTINUED_AS_NEW (the proto package is CommonJS: no named ESM enums). */
const CONTINUED_AS_NEW = 4;

export interface DescribedRun {
  firstRunId: string;
  continuedAsNew: boolean;
  memo(keys: string[]): Promise<Record<string, unknown>>;
  /** A capture's follower's heartbeat: its transaction and preconfirmation, once seen. */
  captureProgress(): Promise<CaptureOnchainProgress | undefined>;
}

export async function describeRun(temporal: Client, workflowId: string, runId?: string): Promise<DescribedRun> {
  const raw = await temporal.workflowService.describeWorkflowExecution({ namespace: temporal.options.namespace, execution: { workflowId, runId } });
  const info = raw.workflowExecutionInfo;
  const converter = temporal.workflow.options.loadedDataConverter;
  return {
    firstRunId: info?.firstRunId || info?.execution?.runId || runId || '',
    continuedAsNew: info?.status === CONTINUED_AS_NEW,
    memo: async (keys) => {
      const fields = Object.fromEntries(keys.flatMap((k) => (info?.memo?.fields?.[k] ? [[k, info.memo.fields[k]]] : [])));
      // Opened for this workflow only: a memo entry copied from another history is refused (runtime/codec.ts).
      const memo = (await decodeMapFromPayloads(converter, fields as never, { type: 'workflow', namespace: temporal.options.namespace, workflowId })) ?? {};
      return sealedEntries(memo);
    },
    captureProgress: async () => {
      const pending = raw.pendingActivities?.find((a) => a.activityType?.name === 'captureOnchain' && a.heartbeatDetails?.payloads?.length);
      if (!pending) return undefined;
      // Heartbeats are sealed for their activity of this workflow.
      const [details] = await decodeArrayFromPayloads(converter, pending.heartbeatDetails!.payloads as never, {
        type: 'activity',
        namespace: temporal.options.namespace,
        workflowId,
        activityId: pending.activityId ?? undefined,
        isLocal: false,
      });
      // Only what authcap's worker sealed counts.
      return sealedEntries({ details })?.details as CaptureOnchainProgress | undefined;
    },
  };
}
