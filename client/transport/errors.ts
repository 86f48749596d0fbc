// Temporal's errors, translated into authcap's stable codes.
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { AuthcapError, isErrorCode } from '../../domain/errors.js';

export function toAuthcapError(err: unknown): AuthcapError {
  if (err instanceof AuthcapError) return err;
  if (err instanceof WorkflowNotFoundError) return new AuthcapError('not_found', 'no authorization with that id');
  if (err instanceof WorkflowExecutionAlreadyStartedError) {
    return new AuthcapError('order_has_open_authorization', 'this order already has an open authorization');
  }
  if (err instanceof WorkflowUpdateFailedError) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure && cause.type === 'capture_already_requested') return new RepeatedCaptureError(detailsOf(cause) ?? {});
    if (cause instanceof ApplicationFailure && isErrorCode(cause.type)) return new AuthcapError(cause.type, cause.message, detailsOf(cause));
    return new AuthcapError('internal_error', cause?.message ?? err.message);
  }
  // gRPC RESOURCE_EXHAUSTED: the server's own limits, such as its cap on updates in flight per
  // workflow, which a burst at one authorization reaches. Nothing was applied: retry shortly.
  const code = (err as { code?: number })?.code ?? (err as { cause?: { code?: number } })?.cause?.code;
  if (code === 8) return authorizationBusy();
  // gRPC NOT_FOUND from a raw service call (a describe of an execution that does not exist).
  if (code === 5) return new AuthcapError('not_found', 'no authorization with that id');
  // The client names only its own step ("Workflow Update failed"); the server's reason is in the cause.
  const detail = (err as { cause?: { details?: unknown } })?.cause?.details;
  const message = [String((err as Error)?.message ?? err), typeof detail === 'string' ? detail : ''].filter(Boolean).join(': ');
  if (/workflow execution already completed/i.test(message)) {
    return new AuthcapError('invalid_state', 'the authorization is already in a final state');
  }
  if (/not found/i.test(message) && /workflow/i.test(message)) return new AuthcapError('not_found', 'no authorization with that id');
  return new AuthcapError('internal_error', message);
}

/**
 * A held payment's capture asked again with its Idempotency-Key: the workflow refused it (so it left no
 * trace) and named the part it made; the capture action answers with that part's outcome instead.
 */
export class RepeatedCaptureError extends AuthcapError {
  constructor(readonly part: Record<string, unknown>) {
    super('invalid_state', 'this capture was requested already');
  }
}

/** A failure's first detail, when it is a plain object of what a caller may act on (retryAfterSeconds). */
function detailsOf(failure: ApplicationFailure): Record<string, unknown> | undefined {
  const first = failure.details?.[0];
  return first && typeof first === 'object' && !Array.isArray(first) ? (first as Record<string, unknown>) : undefined;
}

/** Too many requests at one authorization at once (nothing was applied): 429, retry in a second. */
export function authorizationBusy(): AuthcapError {
  return new AuthcapError('rate_limited', 'too many requests for this authorization at once; retry shortly', { retryAfterSeconds: 1 });
}
