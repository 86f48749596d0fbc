// The reasons an x402 facilitator gives for a payment it refuses: the specification's names where it
// has one (§9), the `exact` EVM SDK's where it does not (a nonce already used). authcap's own error
// codes map onto them, so a refusal reads the same whichever layer found it.
import type { ErrorCode } from '../../domain/errors.js';

export const x402Reasons = [
  'insufficient_funds',
  'invalid_exact_evm_payload_authorization_valid_after',
  'invalid_exact_evm_payload_authorization_valid_before',
  'invalid_exact_evm_payload_authorization_value_mismatch',
  'invalid_exact_evm_payload_signature',
  'invalid_exact_evm_payload_recipient_mismatch',
  'invalid_exact_evm_nonce_already_used',
  'invalid_network',
  'invalid_payload',
  'invalid_payment_requirements',
  'invalid_scheme',
  'unsupported_scheme',
  'invalid_x402_version',
  'invalid_transaction_state',
  'settlement_pending',
  'unexpected_verify_error',
  'unexpected_settle_error',
] as const;
export type X402Reason = (typeof x402Reasons)[number];

/** A payment refused, with the reason an x402 server reads and a sentence a person does. */
export class X402Refusal extends Error {
  override readonly name = 'X402Refusal';
  constructor(
    readonly reason: X402Reason,
    message: string,
  ) {
    super(message);
  }
}

const byCode: Partial<Record<ErrorCode, X402Reason>> = {
  invalid_signature: 'invalid_exact_evm_payload_signature',
  contract_wallet_unsupported: 'invalid_exact_evm_payload_signature',
  domain_mismatch: 'invalid_exact_evm_payload_signature',
  recipient_mismatch: 'invalid_exact_evm_payload_recipient_mismatch',
  authorization_expired: 'invalid_exact_evm_payload_authorization_valid_before',
  validity_too_long: 'invalid_exact_evm_payload_authorization_valid_before',
  authorization_not_yet_valid: 'invalid_exact_evm_payload_authorization_valid_after',
  nonce_already_used: 'invalid_exact_evm_nonce_already_used',
  nonce_already_held: 'invalid_exact_evm_nonce_already_used',
  insufficient_balance: 'insufficient_funds',
  network_not_served: 'invalid_network',
  token_not_served: 'invalid_payment_requirements',
  token_policy_blocked: 'invalid_transaction_state',
  capture_reverted: 'invalid_transaction_state',
  validation_error: 'invalid_payload',
};

/** The x402 reason for one of authcap's refusals; undefined for what is not the payment's fault (an outage). */
export function reasonForCode(code: ErrorCode): X402Reason | undefined {
  return byCode[code];
}
