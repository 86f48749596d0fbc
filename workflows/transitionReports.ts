// What a transition tells the worker's metrics, through the telemetry sink: no workflow command,
// nothing in history, not called again on replay.
import { proxySinks } from '@temporalio/workflow';
import type { AuthorizationState } from '../domain/authorization.js';
import type { AuthcapSinks } from '../domain/telemetry.js';
import type { Snapshot } from './authorizationView.js';
import { isFailedCaptureAttempt } from './captureFailureReport.js';
import type { AuthorizationContext, AuthorizationEvent } from './machine.js';

const { telemetry } = proxySinks<AuthcapSinks>();

export function reportTransition(before: Snapshot, after: Snapshot, from: AuthorizationState, to: AuthorizationState, event: AuthorizationEvent): void {
  const context = after.context;
  if (to !== from) telemetry.transition({ orderId: context.orderId, network: context.chain?.network, from, to, event: event.type });
  if (event.type === 'CAPTURE_CONFIRMED') reportCaptureTiming(context);
  if (isFailedCaptureAttempt(before, after, event.type)) {
    telemetry.captureFailed({ orderId: context.orderId, network: context.chain?.network, code: context.lastError?.code ?? 'internal_error' });
  }
}

/** How long a capture took from its submission to the preconfirmed view, and to its depth. */
function reportCaptureTiming(context: AuthorizationContext): void {
  const capture = context.capture;
  const requested = capture?.submittedAt;
  if (!capture?.confirmedAt || !requested) return;
  const since = (at: string | null) => (at ? Date.parse(at) - Date.parse(requested) : null);
  telemetry.captureConfirmed({
    orderId: context.orderId,
    network: context.chain?.network,
    preconfirmedMs: since(capture.preconfirmedAt),
    capturedMs: since(capture.confirmedAt)!,
  });
}
