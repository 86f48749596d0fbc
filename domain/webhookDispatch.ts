// An endpoint's webhook dispatcher's progress (activities/webhookDispatch.ts), as its workflow keeps
// it between activity slices and as the activity heartbeats it.

/** An attempt whose event the endpoint refused: retried on its own, its later events waiting behind it. */
export interface DispatchRetry {
  workflowId: string;
  nextSequence: number;
  attempts: number;
  /** When its current event first failed. */
  since: string;
  nextAt: string;
  lastError: string;
}

export interface DispatchCursor {
  /** The next scan reads runs stamped at or after this, less the visibility lag. */
  windowStart: string;
  /** Per attempt: the last sequence handled (delivered, not wanted, or given up), and when its run was last stamped. */
  handled: Record<string, { sequence: number; updatedAt: string }>;
  /** Per run id: the stamp last read (a run is read again only when it moved). */
  seen: Record<string, string>;
  retries: Record<string, DispatchRetry>;
  totals: { delivered: number; failed: number };
  /** While the endpoint refuses everything: no scan before this. */
  pausedUntil?: string;
  refusalsInARow?: number;
}

export interface DispatchRun {
  cursor: DispatchCursor;
  /** The endpoint was deleted: its dispatcher ends. */
  endpointDeleted: boolean;
}

/** One dispatcher per webhook endpoint. */
export function webhookDispatchWorkflowId(endpointId: string): string {
  return `webhook-dispatch-${endpointId}`;
}

export const WEBHOOK_DISPATCH_WORKFLOW_TYPE = 'webhookDispatchWorkflow';
