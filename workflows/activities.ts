// Activity proxies with their timeouts and retry policies. Reads retry quickly; waits heartbeat.
import { proxyActivities } from '@temporalio/workflow';
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
