// Token revert strings (FiatToken v2.2, design.md) mapped to authcap's stable codes. Matching on the
// tail of the string keeps it working across token versions that prefix them differently.
import type { ErrorCode } from './errors.js';

const reasons: readonly [fragment: string, code: ErrorCode][] = [
  ['paused', 'token_policy_blocked'],
  ['account is blacklisted', 'token_policy_blocked'],
  ['caller must be the payee', 'recipient_mismatch'],
  ['authorization is not yet valid', 'authorization_not_yet_valid'],
  ['authorization is expired', 'authorization_expired'],
  ['authorization is used or canceled', 'nonce_already_used'],
  ['invalid signature', 'invalid_signature'],
  ['transfer amount exceeds balance', 'insufficient_balance'],
];

export function codeForRevertReason(reason: string | undefined): ErrorCode {
  if (!reason) return 'capture_reverted';
  const lower = reason.toLowerCase();
  return reasons.find(([fragment]) => lower.includes(fragment.toLowerCase()))?.[1] ?? 'capture_reverted';
}
