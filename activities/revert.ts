// Reading a revert reason out of whatever viem threw, and telling retryable failures from final ones.
import { BaseError, ContractFunctionRevertedError } from 'viem';
import type { CaptureFailure } from '../domain/facts.js';
import { codeForRevertReason } from '../domain/revertReasons.js';

export function revertReasonOf(err: unknown): string | undefined {
  if (err instanceof BaseError) {
    const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
    if (reverted?.reason) return reverted.reason;
  }
  const message = String((err as Error)?.message ?? err);
  // Stay on the line of the reason: a revert with none must not pick up viem's next line ("Version: …").
  const match = /reverted with (?:the following )?reason:?[ \t]*\n?[ \t]*([^\n]+)/i.exec(message) ?? /execution reverted:?[ \t]*([^\n]*)/i.exec(message);
  const reason = match?.[1]?.trim();
  return reason && !/^(Version:|for an unknown reason)/i.test(reason) ? reason : undefined;
}

/** True when the node said the call reverted (a final answer), not that the node is unavailable. */
export function isRevert(err: unknown): boolean {
  if (err instanceof BaseError && err.walk((e) => e instanceof ContractFunctionRevertedError)) return true;
  return /revert/i.test(String((err as Error)?.message ?? ''));
}

export function captureFailureFromRevert(err: unknown): CaptureFailure {
  const reason = revertReasonOf(err);
  return { code: codeForRevertReason(reason), message: reason ? `the token refused the capture: ${reason}` : 'the capture reverted' };
}

export function cancelFailureFromRevert(err: unknown): CaptureFailure {
  const reason = revertReasonOf(err);
  return { code: codeForRevertReason(reason), message: reason ? `the token refused the cancellation: ${reason}` : 'the cancellation reverted' };
}
