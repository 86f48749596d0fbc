// The chain a workflow works on, handed to every activity it schedules in a header (the worker's
// activity interceptor reads it: activities/chainRouting.ts). Each workflow has its own module
// instances, so this is the running workflow's own. Runs from before networks never set it: their
// activities carry no header and run on the default chain, as they always did.
import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';
import { CHAIN_HEADER, type ChainRef } from '../domain/chain.js';

let chain: Partial<ChainRef> | undefined;

/** The network (and token; a relayer names only its network) every activity of this workflow runs on. */
export function useChain(ref: Partial<ChainRef> | undefined): void {
  chain = ref;
}

export const currentChain = (): Partial<ChainRef> | undefined => chain;

export function chainHeaderInterceptor(): WorkflowOutboundCallsInterceptor {
  const withChain = <T extends { headers: Record<string, unknown> }>(input: T): T =>
    chain ? { ...input, headers: { ...input.headers, [CHAIN_HEADER]: defaultPayloadConverter.toPayload(chain) } } : input;
  return {
    scheduleActivity: (input, next) => next(withChain(input)),
    scheduleLocalActivity: (input, next) => next(withChain(input)),
  };
}
