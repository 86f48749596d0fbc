// A hold's precheck and the simulation of its authorize in one local activity, as captureAttempt.ts
// is for a capture: the `pending` view's facts for the machine's guards (the payer's balance, the
// nonce, the token's policy, the window, the operator's gas), and the escrow's authorize run there
// from the operator, read at once.
import type { CaptureAttempt, CaptureRequest, PrepareResult } from '../domain/activityContract.js';
import { escrowCalldata, escrowCallRefusal, type EscrowCall } from '../domain/escrowCall.js';
import type { ChainContext } from './chainContext.js';
import { createNonceStateActivity } from './nonceState.js';
import { createPrecheckActivity } from './precheck.js';
import { isRevert } from '../runtime/chain/revert.js';
import { captureFailureFromRevert } from './revert.js';

/** The head feed may be a few blocks behind the node. */
const LOOK_BACK_BLOCKS = 8n;

export function createHoldAttemptActivity(ctx: ChainContext) {
  const precheck = createPrecheckActivity(ctx);
  const readNonceState = createNonceStateActivity(ctx);
  return async function prepareHoldAttempt(request: CaptureRequest & { call: EscrowCall }): Promise<CaptureAttempt> {
    const [facts, prepared, head] = await Promise.all([
      precheck(request),
      simulate(request),
      ctx.heads.head ?? ctx.publicClient.getBlockNumber({ cacheTime: 0 }),
    ]);
    const fromBlock = head > LOOK_BACK_BLOCKS ? head - LOOK_BACK_BLOCKS : 0n;
    return { facts, prepared, fromBlock: fromBlock.toString() };
  };

  async function simulate(request: CaptureRequest & { call: EscrowCall }): Promise<PrepareResult> {
    if (!ctx.escrow) return { status: 'failed', failure: { code: 'holds_not_available', message: `${ctx.network} has no escrow configured` } };
    const operator = request.call.paymentInfo.operator;
    const refused = escrowCallRefusal(request.call, operator, ctx.tokenAddress);
    if (refused) return { status: 'failed', failure: { code: 'relay_refused', message: refused } };
    try {
      await ctx.publicClient.call({ account: operator, to: ctx.escrow.escrow, data: escrowCalldata(request.call, ctx.escrow), blockTag: 'pending' });
    } catch (err) {
      if (!isRevert(err)) throw err;
      const onchain = await readNonceState({ authorizer: request.authorization.from, nonce: request.authorization.nonce });
      if (onchain.status !== 'unused') return { status: 'consumed', onchain };
      return { status: 'failed', failure: captureFailureFromRevert(err) };
    }
    return { status: 'ready' };
  }
}
