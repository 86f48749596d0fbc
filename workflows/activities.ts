// Activity proxies with their timeouts and retry policies. Reads retry quickly; waits heartbeat.
import { proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import { followTaskQueue } from '../domain/taskQueues.js';
import type { AuthorizationActivities } from '../domain/activityContract.js';
import { errorCodes } from '../domain/errors.js';

// Business refusals are final answers: retrying them would not change the chain's mind.
const nonRetryableErrorTypes = Object.keys(errorCodes).filter((code) => code !== 'chain_unavailable');

// Every retry budget is bounded: a node outage ends a command with `chain_unavailable` (and the
// authorization back at rest) instead of holding it, and the caller, open for ever.

/**
 * The short chain reads (a few node calls, well under a second), a refund's attempt (pending reads,
 * the merchant's signature, a simulation) and an authorization's relay request: local activities,
 * inside the workflow task that asks for them, so each costs no extra server round trip or workflow
 * task. Running one again after a crash is harmless: reads, and requests keyed by their id.
 */
export const localReads = proxyLocalActivities<AuthorizationActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '1 minute',
  // Past a short while a retry waits on a timer in history rather than inside the workflow task.
  localRetryThreshold: '2 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', nonRetryableErrorTypes },
});

/**
 * The draft of a new authorization (or the check of a pre-signed one): its create's caller waits for
 * it, so its budget is short. A node that does not answer in it ends the attempt `rejected` with
 * `chain_unavailable`, promptly, instead of holding the caller past its wait.
 */
export const draftReads = proxyLocalActivities<AuthorizationActivities>({
  startToCloseTimeout: '8 seconds',
  scheduleToCloseTimeout: '15 seconds',
  localRetryThreshold: '2 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '2 seconds', nonRetryableErrorTypes },
});

/**
 * Regular activities with a read's budget: they run only once the workflow task that decided them is
 * in history (workflows/relayClient.ts says why a refund's relay request needs that).
 */
export const committedCalls = proxyActivities<AuthorizationActivities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '1 minute',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', nonRetryableErrorTypes },
});

/** Waits on the chain (a cancellation's confirmation, a refused refund attempt's window): they heartbeat. */
export const waits = proxyActivities<AuthorizationActivities>({
  startToCloseTimeout: '10 minutes',
  scheduleToCloseTimeout: '15 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', nonRetryableErrorTypes },
});

/**
 * Followers of a transaction to its depth: one activity each, heartbeating what it has seen. Its
 * schedule-to-close is given per call (the authorization's window); its attempts retry.
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
