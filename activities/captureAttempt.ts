// A capture's precheck and its simulation in one local activity (generation 2): the `pending` view's
// facts for the machine's guards, and the simulated call beside them, read at once. Before, they
// were two local activities one after the other, each an activation of the workflow.
import type { CaptureAttempt, CaptureRequest } from '../domain/activityContract.js';
import type { ChainContext } from './chainContext.js';
import { createCaptureActivities } from './capture.js';
import { createPrecheckActivity } from './precheck.js';

/** The head feed may be a few blocks behind the node. */
const LOOK_BACK_BLOCKS = 8n;

export function createCaptureAttemptActivity(ctx: ChainContext) {
  const precheck = createPrecheckActivity(ctx);
  const { prepareCapture } = createCaptureActivities(ctx);
  return async function prepareCaptureAttempt(request: CaptureRequest): Promise<CaptureAttempt> {
    const [facts, prepared, head] = await Promise.all([
      precheck(request),
      prepareCapture(request),
      ctx.heads.head ?? ctx.publicClient.getBlockNumber({ cacheTime: 0 }),
    ]);
    // Read before anything is sent, and recorded in history: every attempt of this capture (a retried
    // follower that never heartbeated included) looks for its log from here, however late it starts.
    const fromBlock = head > LOOK_BACK_BLOCKS ? head - LOOK_BACK_BLOCKS : 0n;
    return { facts, prepared, fromBlock: fromBlock.toString() };
  };
}
