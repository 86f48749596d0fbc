// How a failed activity or command reads to callers: authcap's own code when it carries one, else
// the chain (or the relayer) was unreachable. Shared by every workflow's procedures.
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { isErrorCode, type ErrorCode } from '../domain/errors.js';
import type { CaptureFailure } from '../domain/facts.js';

export function failure(code: ErrorCode, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: code, message, nonRetryable: true });
}

/** What a failed activity means to a caller: its own code when it carries one, else the chain was unreachable. */
export function failureOf(err: unknown): CaptureFailure {
  if (err instanceof ApplicationFailure && isErrorCode(err.type)) return { code: err.type, message: err.message };
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && isErrorCode(cause.type)) return { code: cause.type, message: cause.message };
  if (cause instanceof TimeoutFailure) return { code: 'chain_unavailable', message: 'the chain did not answer in time; try again' };
  const detail = cause instanceof Error ? cause.message : String(cause);
  return { code: 'chain_unavailable', message: `the chain call failed: ${detail.split('\n')[0]}` };
}
