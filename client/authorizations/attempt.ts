// An authorization id names one attempt of an order: the order's workflow id and the attempt's first
// run. Every action on an existing authorization starts here.
import type { WorkflowHandle } from '@temporalio/client';
import { AuthcapError } from '../../domain/errors.js';
import { parseResourceId } from '../../domain/ids.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';

export interface Attempt {
  orderId: string;
  workflowId: string;
  /** The attempt's first run: continue-as-new moves it on to later runs of the same id. */
  runId: string;
}

/** The attempt an id names; `not_found` for anything that is not an authorization id. */
export function attemptOf(id: string): Attempt {
  const parsed = parseResourceId(String(id));
  if (!parsed) throw new AuthcapError('not_found', `no authorization with id ${id}`);
  return parsed;
}

/** The attempt's workflow, followed across continue-as-new (its first run names it). */
export function attemptHandle(transport: TemporalTransport, id: string): WorkflowHandle {
  const attempt = attemptOf(id);
  return transport.workflow.getHandle(attempt.workflowId, undefined, { firstExecutionRunId: attempt.runId });
}
