// Why a capture precheck failed, in the order the token itself would revert (design.md).
import type { ErrorCode } from '../domain/errors.js';
import type { AuthorizationMessage } from '../domain/eip3009.js';
import { decimalsOf, formatAmount } from '../domain/amount.js';
import type { CapturePrecheckFacts } from '../domain/facts.js';

export function precheckFailure(
  context: { value: string; authorization: AuthorizationMessage | null; chain?: { decimals: number } },
  facts: CapturePrecheckFacts,
): { code: ErrorCode; message: string } {
  const auth = context.authorization;
  const chainTime = BigInt(facts.chainTime);
  if (facts.paused) return { code: 'token_policy_blocked', message: 'the token is paused' };
  if (facts.payerBlacklisted) return { code: 'token_policy_blocked', message: 'the token has blacklisted the payer' };
  if (facts.merchantBlacklisted) return { code: 'token_policy_blocked', message: 'the token has blacklisted the merchant' };
  if (auth && chainTime <= BigInt(auth.validAfter)) {
    return { code: 'authorization_not_yet_valid', message: `chain time ${chainTime} is not after validAfter ${auth.validAfter}` };
  }
  if (auth && chainTime >= BigInt(auth.validBefore)) {
    return { code: 'authorization_expired', message: `chain time ${chainTime} is not before validBefore ${auth.validBefore}` };
  }
  if (facts.authorizationUsed) return { code: 'nonce_already_used', message: 'the nonce is already used or canceled onchain' };
  if (BigInt(facts.payerBalance) < BigInt(context.value)) {
    return {
      code: 'insufficient_balance',
      message: `payer holds ${formatAmount(BigInt(facts.payerBalance), decimalsOf(context.chain))}, the authorization needs ${formatAmount(BigInt(context.value), decimalsOf(context.chain))}`,
    };
  }
  if (BigInt(facts.merchantGasBalance) < BigInt(facts.requiredGas)) {
    return {
      code: 'insufficient_merchant_gas',
      message: `merchant has ${facts.merchantGasBalance} wei for gas, a capture needs about ${facts.requiredGas}`,
    };
  }
  return { code: 'internal_error', message: 'precheck failed for no known reason' };
}
