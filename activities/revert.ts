// What a revert means for a capture or a cancellation: the failure its workflow records, its code
// from the token's reason (domain/revertReasons.ts). Reading the reason is runtime/chain/revert.ts's.
import type { CaptureFailure } from '../domain/facts.js';
import { codeForRevertReason } from '../domain/revertReasons.js';
import { revertReasonOf } from '../runtime/chain/revert.js';

export function captureFailureFromRevert(err: unknown): CaptureFailure {
  const reason = revertReasonOf(err);
  return { code: codeForRevertReason(reason), message: reason ? `the token refused the capture: ${reason}` : 'the capture reverted' };
}

export function cancelFailureFromRevert(err: unknown): CaptureFailure {
  const reason = revertReasonOf(err);
  return { code: codeForRevertReason(reason), message: reason ? `the token refused the cancellation: ${reason}` : 'the cancellation reverted' };
}
