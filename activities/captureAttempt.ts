// A capture's precheck and its simulation in one local activity: the `pending` view's facts for the
// machine's guards, and the simulated call beside them, read at once (one activation of the workflow,
// not two).
import type { CaptureAttempt, CaptureRequest, PrepareResult } from '../domain/activityContract.js';
import type { ChainContext } from './chainContext.js';
import { createNonceStateActivity } from './nonceState.js';
import { createPrecheckActivity } from './precheck.js';
import { isRevert } from '../runtime/chain/revert.js';
import { captureFailureFromRevert } from './revert.js';
import { captureCall } from './tokenCalls.js';

/** The head feed may be a few blocks behind the node. */
const LOOK_BACK_BLOCKS = 8n;

export function createCaptureAttemptActivity(ctx: ChainContext) {
  const precheck = createPrecheckActivity(ctx);
  const simulate = createCaptureSimulation(ctx);
  return async function prepareCaptureAttempt(request: CaptureRequest): Promise<CaptureAttempt> {
    const [facts, prepared, head] = await Promise.all([
      precheck(request),
      simulate(request),
      ctx.heads.head ?? ctx.publicClient.getBlockNumber({ cacheTime: 0 }),
    ]);
    // Read before anything is sent, and recorded in history: every attempt of this capture (a retried
    // follower that never heartbeated included) looks for its log from here, however late it starts.
    const fromBlock = head > LOOK_BACK_BLOCKS ? head - LOOK_BACK_BLOCKS : 0n;
    return { facts, prepared, fromBlock: fromBlock.toString() };
  };
}

/** Simulates the capture at `pending`: ready to relay, refused (why), or its nonce consumed already. */
function createCaptureSimulation(ctx: ChainContext) {
  const readNonceState = createNonceStateActivity(ctx);
  return async function simulateCapture(request: CaptureRequest): Promise<PrepareResult> {
    const call = captureCall(request, ctx.tokenAddress);
    try {
      // Simulating against `pending` catches every revert the token would raise, before paying gas.
      // The precheck reads the nonce as well; only a refusal sends us to read its fate.
      await ctx.publicClient.simulateContract({ ...call, account: ctx.senderFor(request.authorization.to), blockTag: 'pending' });
    } catch (err) {
      if (!isRevert(err)) throw err;
      const onchain = await readNonceState({ authorizer: request.authorization.from, nonce: request.authorization.nonce });
      if (onchain.status !== 'unused') return { status: 'consumed', onchain };
      return { status: 'failed', failure: captureFailureFromRevert(err) };
    }
    return { status: 'ready' };
  };
}
