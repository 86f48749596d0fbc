// The workflow interceptors bundled with the workflows (scripts/build.ts, worker/createWorker.ts and
// the replay test register this module): every input sealed, and writes coalesced where switched on.
import type { WorkflowInterceptors } from '@temporalio/workflow';
import { coalescedWritesInterceptor } from './coalescedWrites.js';
import { sealedInboundInterceptor } from './sealedInputs.js';

export const interceptors = (): WorkflowInterceptors => ({ inbound: [sealedInboundInterceptor()], internals: [coalescedWritesInterceptor()] });
