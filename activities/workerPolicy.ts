// The worker's settings that shape a workflow's schedule, read once per workflow and kept in its history.
import type { WorkerPolicy } from '../domain/activityContract.js';
import type { ChainContext } from './chainContext.js';

export function workerPolicyOf(ctx: ChainContext): WorkerPolicy {
  return { reconcileIntervalSeconds: ctx.reconcileIntervalSeconds, maxValiditySeconds: ctx.maxValiditySeconds, historyLimit: ctx.historyLimit };
}
