// What workflow code reports to the worker process for metrics and logs. Workflows cannot do I/O, so
// they call these sinks (proxySinks); the worker implements them. Never pass a secret through here.
import type { Sinks } from '@temporalio/workflow';

/** Every report names the network it concerns (absent from runs started without one: the worker's first). */
export interface OnNetwork {
  network?: string;
}

export interface TransitionInfo extends OnNetwork {
  orderId: string;
  from: string;
  to: string;
  /** What moved it: the event type (e.g. CAPTURE_CONFIRMED). */
  event: string;
}

export interface CaptureTiming extends OnNetwork {
  orderId: string;
  /** Capture requested → AuthorizationUsed seen in the pending view. Null when not observed. */
  preconfirmedMs: number | null;
  /** Capture requested → confirmation depth reached. */
  capturedMs: number;
}

export interface RefundOutcome extends OnNetwork {
  orderId: string;
  outcome: 'succeeded' | 'failed';
  /** Refund asked for → succeeded or failed. */
  ms: number;
  /** Why it failed (a stable error code). */
  code?: string;
}

/** A capture attempt that ended without a capture: refused by its precheck, or its command or transaction failed. */
export interface CaptureFailureReport extends OnNetwork {
  orderId: string;
  /** The authorization's lastError.code after the attempt. */
  code: string;
}

export interface AuthcapSinks extends Sinks {
  telemetry: {
    transition(info: TransitionInfo): void;
    captureConfirmed(timing: CaptureTiming): void;
    captureFailed(failure: CaptureFailureReport): void;
    refundSettled(outcome: RefundOutcome): void;
    relayerQueue(depth: { queued: number; inflight: number } & OnNetwork): void;
  };
}
