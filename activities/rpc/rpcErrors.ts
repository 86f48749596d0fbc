// JSON-RPC failures sorted by what to do about them. Temporal retry policies do the retrying:
// retryable errors are thrown as they are; the rest become non-retryable ApplicationFailures.
import { ApplicationFailure } from '@temporalio/common';
import { BaseError, HttpRequestError, RpcRequestError, TimeoutError } from 'viem';
import { isRevert, revertReasonOf } from '../../runtime/chain/revert.js';
import { codeForRevertReason } from '../../domain/revertReasons.js';
import { AuthcapError } from '../../domain/errors.js';

export type RpcErrorKind = 'retryable' | 'range_too_large' | 'invalid_params' | 'revert';

const RANGE_HINTS =
  /block range|range (is )?too (large|wide)|exceed|more than \d+ (results|logs)|too many (results|logs)|limit|response size|query timeout|timed? ?out/i;
const RETRYABLE_HINTS =
  /header not found|timeout|timed out|rate limit|too many requests|econnrefused|econnreset|socket hang up|fetch failed|temporarily|unavailable|busy|overloaded|internal error/i;

export function classifyRpcError(err: unknown, { forLogs = false } = {}): RpcErrorKind {
  const message = String((err as Error)?.message ?? err);
  // What the node itself said; viem's own wording ("Missing or invalid parameters" for any -32000)
  // says nothing about the cause, so only the node's words are matched for invalid params.
  const nodeSaid = err instanceof BaseError ? String(err.details ?? '') : message;
  const text = `${message} ${nodeSaid}`;
  // A rate limit is not a range problem: halving would only send more requests.
  const rateLimited = hasStatus(err, 429) || /rate limit|too many requests/i.test(text);
  if (forLogs && !rateLimited && (RANGE_HINTS.test(text) || hasRpcCode(err, -32005) || hasStatus(err, 413))) return 'range_too_large';
  if (isRevert(err)) return 'revert';
  if (rateLimited || err instanceof TimeoutError || hasStatus(err, 408) || serverError(err)) return 'retryable';
  if (RETRYABLE_HINTS.test(text)) return 'retryable';
  if (hasRpcCode(err, -32602) || hasRpcCode(err, -32600) || /invalid (argument|params|parameter)/i.test(nodeSaid)) return 'invalid_params';
  // Anything unknown is assumed transient: a retry is cheap, a wrong final answer is not.
  return 'retryable';
}

/** Rethrows a node error in the form Temporal's retry policy understands. */
export function asActivityError(err: unknown): Error {
  // Our own input checks are final answers with a code already.
  if (err instanceof AuthcapError) return ApplicationFailure.nonRetryable(err.message, err.code);
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
