// An activity acts only on arguments sealed by the payload codec for it: this activity of this
// workflow (runtime/codec.ts binds each payload to its place). Activities are scheduled by
// authcap's own workflows, which seal what they send; a plain argument, or one copied out of another
// history, can only come from a forged worker answering a workflow task, and it is refused before
// the activity runs (the relayer's broadcast, a refund's signature: nothing the merchant key does
// starts from it).
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory } from '@temporalio/worker';
import { describeUnsealed, isOperatorSealed, isUnsealed } from '../domain/sealed.js';

const sealedInbound: ActivityInboundCallsInterceptor = {
  async execute(input, next) {
    for (const arg of input.args) {
      if (isUnsealed(arg)) throw ApplicationFailure.create({ type: 'unauthenticated_input', nonRetryable: true, message: `refused ${describeUnsealed(arg)}` });
      if (isOperatorSealed(arg))
        throw ApplicationFailure.create({ type: 'unauthenticated_input', nonRetryable: true, message: "refused an operator's input as an activity argument" });
    }
    return next(input);
  },
};

export const sealedActivityInputs: ActivityInterceptorsFactory = () => ({ inbound: sealedInbound });
