// The workflow interceptors bundled with the workflows (scripts/build.ts, worker/createWorker.ts and
// the replay test register this module): every input sealed for its place (activity results too),
// each activity told its chain, and each activation's memo and search-attribute writes coalesced.
import type { WorkflowInterceptors } from '@temporalio/workflow';
import { coalescedWritesInterceptor } from './coalescedWrites.js';
import { sealedInboundInterceptor, sealedOutboundInterceptor, sealedResultsInterceptor } from './sealedInputs.js';
import { chainHeaderInterceptor } from './chainHeader.js';

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [sealedInboundInterceptor()],
  outbound: [sealedOutboundInterceptor(), chainHeaderInterceptor()],
  internals: [sealedResultsInterceptor(), coalescedWritesInterceptor()],
});
