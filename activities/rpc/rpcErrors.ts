// JSON-RPC failures sorted by what to do about them. Temporal retry policies do the retrying:
// retryable errors are thrown as they are; the rest become non-retryable ApplicationFailures.
import { ApplicationFailure } from '@temporalio/common';
import { BaseError, HttpRequestError, RpcRequestError, TimeoutError } from 'viem';
import { isRevert, revertReasonOf } from '../revert.js';
import { codeForRevertReason } from '../../domain/revertReasons.js';

export type RpcErrorKind = 'retryable' | 'range_too_large' | 'invalid_params' | 'revert';

const RANGE_HINTS = /block range|range (is )?too (large|wide)|exceed|more than \d+ (results|logs)|too many (results|logs)|limit|response size|query timeout|timed? ?out/i;
const RETRYABLE_HINTS = /header not found|timeout|timed out|rate limit|too many requests|econnrefused|econnreset|socket hang up|fetch failed|temporarily|unavailable|busy|overloaded|internal error/i;

export function classifyRpcError(err: unknown, { forLogs = false } = {}): RpcErrorKind {
  const message = String((err as Error)?.message ?? err);
  const details = err instanceof BaseError ? `${err.details ?? ''} ${err.shortMessage}` : '';
  const text = `${message} ${details}`;
  if (forLogs && (RANGE_HINTS.test(text) || hasRpcCode(err, -32005) || hasStatus(err, 413))) return 'range_too_large';
  if (isRevert(err)) return 'revert';
  if (err instanceof TimeoutError || hasStatus(err, 429) || hasStatus(err, 408) || serverError(err)) return 'retryable';
  if (RETRYABLE_HINTS.test(text)) return 'retryable';
  if (hasRpcCode(err, -32602) || hasRpcCode(err, -32600) || /invalid (argument|params|parameter)/i.test(text)) return 'invalid_params';
  // Anything unknown is assumed transient: a retry is cheap, a wrong final answer is not.
  return 'retryable';
}

/** Rethrows a node error in the form Temporal's retry policy understands. */
export function asActivityError(err: unknown): Error {
  const kind = classifyRpcError(err);
  if (kind === 'revert') {
    const reason = revertReasonOf(err);
    return ApplicationFailure.nonRetryable(reason ?? 'the call reverted', codeForRevertReason(reason));
  }
  if (kind === 'invalid_params') {
    return ApplicationFailure.nonRetryable(String((err as Error)?.message ?? err).split('\n')[0]!, 'rpc_invalid_params');
  }
  return err instanceof Error ? err : new Error(String(err));
}

function hasRpcCode(err: unknown, code: number): boolean {
  return err instanceof BaseError && Boolean(err.walk((e) => (e as { code?: number }).code === code));
}

function hasStatus(err: unknown, status: number): boolean {
  return err instanceof BaseError && Boolean(err.walk((e) => e instanceof HttpRequestError && e.status === status));
}

function serverError(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  return Boolean(err.walk((e) => (e instanceof HttpRequestError && (e.status ?? 0) >= 500) || (e instanceof RpcRequestError && e.code === -32603)));
}
