// A workflow acts only on a start the API just made, or on what its own continue-as-new carried.
// A start input copied out of history, sealed for this very workflow id, opens here (the codec binds
// payloads to the workflow id, and Temporal gives no run id to bind to): once the id's run was
// terminated, such a copy would start it again from an earlier point (a ledger rewound, a capture
// replayed). The API stamps each start with the time of its request; a start much older than the run
// is a copy.
import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';

/** How long after the API's request its run may start (clock skew between the API's host and Temporal's). */
export const START_SLACK_MS = 60_000;

export function refusedStart(why: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'unauthenticated_input', nonRetryable: true, message: `refused the workflow input: ${why}` });
}

/**
 * Why this run's input is not one the API just sent or the run's own continue-as-new carried, if it
 * is not. `carried`: the input holds state a continue-as-new hands over (a ledger, a machine snapshot).
 */
export function staleStart(input: { requestedAt?: string }, carried: boolean): string | undefined {
  const continued = workflowInfo().continuedFromExecutionRunId !== undefined;
  if (carried) return continued ? undefined : 'state carried over starts only by its own continue-as-new';
  if (continued) return undefined;
  const requested = input.requestedAt === undefined ? Number.NaN : Date.parse(input.requestedAt);
  if (!Number.isFinite(requested)) return 'it carries no time of request';
  if (workflowInfo().startTime.getTime() - requested > START_SLACK_MS) return 'it was requested long before this run started (a copy)';
  return undefined;
}
