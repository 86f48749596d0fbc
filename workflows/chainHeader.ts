// The chain a workflow works on, handed to every activity it schedules as one more argument, after
// the activity's own (the worker's activity interceptor takes it off: worker/chainHeaderInbound.ts).
// An argument, not a header: arguments are sealed by the payload codec for that one activity, so a
// forged task cannot send a follower to another network's relayer; headers travel in the clear.
// Each workflow has its own module instances, so this is the running workflow's own. Runs from
// before networks never set it: their activities run on the default chain, as they always did.
import type { WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';
import { CHAIN_ARGUMENT, type ChainArgument, type ChainRef } from '../domain/chain.js';

let chain: Partial<ChainRef> | undefined;

/** The network (and token; a relayer names only its network) every activity of this workflow runs on. */
export function useChain(ref: Partial<ChainRef> | undefined): void {
  chain = ref;
}

export const currentChain = (): Partial<ChainRef> | undefined => chain;

export function chainHeaderInterceptor(): WorkflowOutboundCallsInterceptor {
  const withChain = <T extends { args: unknown[] }>(input: T): T => {
    if (!chain) return input;
    const argument: ChainArgument = { [CHAIN_ARGUMENT]: chain };
    return { ...input, args: [...input.args, argument] };
  };
  return {
    scheduleActivity: (input, next) => next(withChain(input)),
    scheduleLocalActivity: (input, next) => next(withChain(input)),
  };
}
