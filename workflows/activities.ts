// Activity proxies with their timeouts and retry policies. Reads retry quickly; waits heartbeat.
import { proxyActivities } from '@temporalio/workflow';
import type { AuthorizationActivities } from '../domain/activityContract.js';
import { errorCodes } from '../domain/errors.js';

// Business refusals are final answers: retrying them would not change the chain's mind.
const nonRetryableErrorTypes = Object.keys(errorCodes).filter((code) => code !== 'chain_unavailable');

export const reads = proxyActivities<AuthorizationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', nonRetryableErrorTypes },
});

export const waits = proxyActivities<AuthorizationActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', nonRetryableErrorTypes },
});
