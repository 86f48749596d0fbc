// Continue-as-new for an authorization: its history stays short however long it waits or however many
// commands it takes. The next run starts with the machine's persisted state and this run's memo (the
// view and every event), so readers never see it empty.
import { allHandlersFinished, condition, makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import type { WorkerPolicy } from '../domain/activityContract.js';
import type { AuthorizationView, AuthorizationWorkflowInput } from '../domain/authorization.js';
import type { Lifecycle } from './lifecycle.js';
import type { ChainWindow } from './procedures.js';

/** Resting, not final, and history long (Temporal suggests it, or past the worker's limit). */
export function shouldRollOver(lifecycle: Lifecycle, policy: WorkerPolicy): boolean {
  if (lifecycle.isFinal || !lifecycle.isResting) return false;
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength > policy.historyLimit;
}

/** Once every command has answered and the authorization rests: the next run, with what this one knows. */
export async function rollOver(orderId: string, lifecycle: Lifecycle, policy: WorkerPolicy, window: ChainWindow, runsBefore: number): Promise<never> {
  await condition(() => allHandlersFinished() && lifecycle.isResting);
  const next: AuthorizationWorkflowInput = {
    orderId,
    resume: { lifecycle: lifecycle.persisted(), policy, fromBlock: window.fromBlock, runs: runsBefore + 1 },
  };
  return makeContinueAsNewFunc<(input: AuthorizationWorkflowInput) => Promise<AuthorizationView>>({ memo: workflowInfo().memo })(next);
}
