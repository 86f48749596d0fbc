// The workflow interceptors bundled with the workflows (scripts/build.ts, worker/createWorker.ts and
// the replay test register this module): every input sealed, each activity told its chain, and writes coalesced where switched on.
import type { WorkflowInterceptors } from '@temporalio/workflow';
import { coalescedWritesInterceptor } from './coalescedWrites.js';
import { sealedInboundInterceptor } from './sealedInputs.js';
import { chainHeaderInterceptor } from './chainHeader.js';

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [sealedInboundInterceptor()],
  outbound: [chainHeaderInterceptor()],
  internals: [coalescedWritesInterceptor()],
});
