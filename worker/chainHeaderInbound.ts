// Runs each activity on the chain its workflow named in the activity's header (workflows/chainHeader.ts).
import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory } from '@temporalio/worker';
import { runOnChain } from '../activities/chainRouting.js';
import { CHAIN_HEADER, type ChainRef } from '../domain/chain.js';

const chainInbound: ActivityInboundCallsInterceptor = {
  execute(input, next) {
    const header = input.headers[CHAIN_HEADER];
    const ref = header ? defaultPayloadConverter.fromPayload<Partial<ChainRef>>(header) : undefined;
    return runOnChain(ref, () => next(input));
  },
};

export const chainHeaderInbound: ActivityInterceptorsFactory = () => ({ inbound: chainInbound });
