// Activity proxies with their timeouts and retry policies. Reads retry quickly; waits heartbeat.
import { patched, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import { followTaskQueue } from '../domain/taskQueues.js';
import type { AuthorizationActivities } from '../domain/activityContract.js';
import { errorCodes } from '../domain/errors.js';

// Business refusals are final answers: retrying them would not change the chain's mind.
const nonRetryableErrorTypes = Object.keys(errorCodes).filter((code) => code !== 'chain_unavailable');

// Every retry budget is bounded: a node outage ends a command with `chain_unavailable` (and the
// authorization back at rest) instead of holding it, and the caller, open for ever.
export const reads = proxyActivities<AuthorizationActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '1 minute',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', nonRetryableErrorTypes },
});

export const waits = proxyActivities<AuthorizationActivities>({
  startToCloseTimeout: '10 minutes',
  scheduleToCloseTimeout: '15 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', nonRetryableErrorTypes },
});

const localReads = proxyLocalActivities<AuthorizationActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '1 minute',
  // Past a short while a retry waits on a timer in history rather than inside the workflow task.
  localRetryThreshold: '2 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', nonRetryableErrorTypes },
});

/**
 * The draft of a new authorization (workflows/authorization.ts): its create's caller waits for it, so
 * its budget is short. A node that does not answer in it ends the attempt `rejected` with
 * `chain_unavailable`, promptly, instead of holding the caller past its wait.
 */
export const draftReads = proxyLocalActivities<AuthorizationActivities>({
  startToCloseTimeout: '8 seconds',
  scheduleToCloseTimeout: '15 seconds',
  localRetryThreshold: '2 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '2 seconds', nonRetryableErrorTypes },
});

/** Patch id: histories recorded before short reads ran as local activities. */
export const LOCAL_READS_PATCH = 'short-reads-run-as-local-activities';

/**
 * The generation of the workflow running in this sandbox (each workflow has its own module instances):
 * from 2 on, every patch below is in the past, so no marker is asked for or recorded.
 */
let generation = 1;
export function useGeneration(value: number): void {
  generation = value;
}
export const currentGeneration = () => generation;

/**
 * The short chain reads (a few node calls, well under a second): run as local activities, inside the
 * workflow task that asks for them, so each costs no extra server round trip or workflow task. They
 * are reads, so running one again after a crash is harmless. Histories from before the change replay
 * with the activities they recorded.
 */
export function shortReads(patchId: string = LOCAL_READS_PATCH): typeof reads {
  if (generation >= 2) return localReads;
  return patched(patchId) ? localReads : reads;
}

/** Patch id: histories recorded before the relay request (an idempotent signal) ran as a local activity. */
export const LOCAL_RELAY_REQUEST_PATCH = 'relay-request-runs-as-local-activity';

/**
 * A refund's attempt (pending reads, the merchant's signature, a simulation): a local activity, like
 * the capture's short reads. Refunds are newer than every patch above, so they need none.
 */
export const refundReads = proxyLocalActivities<AuthorizationActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '1 minute',
  localRetryThreshold: '2 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', nonRetryableErrorTypes },
});

/**
 * Followers of a transaction to its depth (generation 2): one activity each, heartbeating what it has
 * seen. Its schedule-to-close is given per call (the authorization's window); its attempts retry.
 */
export function followers() {
  return proxyActivities<AuthorizationActivities>({
    // Their own task queue and slots (domain/taskQueues.ts): a waiting follower never takes the slot
    // the relayer needs to send what it waits for.
    taskQueue: followTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '20 seconds',
    retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', nonRetryableErrorTypes },
  });
}
