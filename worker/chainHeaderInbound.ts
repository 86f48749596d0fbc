// Runs each activity on the chain its workflow named in the activity's last, sealed argument
// (workflows/chainHeader.ts), and hands the activity its own arguments without it.
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory } from '@temporalio/worker';
import { runOnChain } from '../activities/chainRouting.js';
import { chainOfArgument } from '../domain/chain.js';

const chainInbound: ActivityInboundCallsInterceptor = {
  execute(input, next) {
    const ref = chainOfArgument(input.args.at(-1));
    if (!ref) return next(input);
    return runOnChain(ref, () => next({ ...input, args: input.args.slice(0, -1) }));
  },
};

export const chainHeaderInbound: ActivityInterceptorsFactory = () => ({ inbound: chainInbound });
