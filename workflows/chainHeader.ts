// The chain a workflow works on, handed to every activity it schedules as one more argument, after
// the activity's own (the worker's activity interceptor takes it off: worker/chainHeaderInbound.ts).
// An argument, not a header: arguments are sealed by the payload codec for that one activity, so a
// forged task cannot send a follower to another network's relayer; headers travel in the clear.
//
// A module-level setting, not a value passed down: Temporal calls the outbound interceptor for every
// activity the workflow schedules, with no way for the workflow to hand it a value per call, and
// interceptors are built before the workflow function runs. Each workflow has its own module
// instances (the sandbox evaluates every module per workflow), so this is the running workflow's
// own. A workflow started without a chain never sets it: its activities run on the worker's first.
import type { WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';
import { CHAIN_ARGUMENT, type ChainArgument, type ChainRef } from '../domain/chain.js';

let chain: Partial<ChainRef> | undefined;

/** The network (and token; a relayer names only its network) every activity of this workflow runs on. */
export function useChain(ref: Partial<ChainRef> | undefined): void {
  chain = ref;
}

/** An authorization's (or its refunds') network and token, as its activities are told them. */
export function chainRefOf(of: ChainRef | undefined): ChainRef | undefined {
  return of && { network: of.network, token: of.token };
}

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
