// Telling a node's final "the call reverted" from a node that did not answer, and reading the revert
// reason out of whatever viem threw. For every reader of a chain: the activities and the start checks.
import { BaseError, ContractFunctionRevertedError } from 'viem';

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
