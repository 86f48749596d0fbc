// x402's `auth-capture` scheme (the escrow scheme; its client is `@x402/evm`'s AuthCaptureEvmScheme):
// the payer signs the escrow collector's ReceiveWithAuthorization of a payment's terms (Commerce
// Payments' PaymentInfo), and a settle puts the funds on hold. authcap takes it as a pre-signed hold
// (docs/holds.md), so the merchant then captures, voids or refunds it through authcap's API. Here:
// the terms read back out of the requirements' `extra` and the payload's salt, judged without I/O by
// the same rule a pre-signed hold is (domain/hold.ts), and what /supported says a server must put in `extra`.
import { getAddress, zeroAddress, type Address } from 'viem';
import type { AuthorizationMessage } from '../../domain/eip3009.js';
import type { WirePaymentInfo } from '../../domain/escrowCall.js';
import { fromWire } from '../../domain/escrowCall.js';
import { presignedHoldRefusal } from '../../domain/hold.js';
import type { ServedNetwork } from '../../runtime/deployment/catalog.js';
import { X402Refusal, type X402Reason } from './reasons.js';
import type { FacilitatorRequest } from './wire.js';

export const AUTH_CAPTURE = 'auth-capture';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The terms the payer signed, from what the server asked (`extra`) and the payload's salt; refused unless authcap can hold them. */
export function heldTerms(
  request: FacilitatorRequest,
  authorization: AuthorizationMessage,
  served: ServedNetwork,
  context: { merchants: readonly Address[]; nowSeconds: number },
): WirePaymentInfo {
  const { paymentRequirements: requirements, paymentPayload } = request;
  const escrow = served.escrow;
  if (!escrow) throw new X402Refusal('invalid_payment_requirements', `${served.network} has no escrow configured: auth-capture payments are not taken there`);
  const extra = requirements.extra ?? {};
  const named = extra.authCaptureEscrow;
  if (typeof named !== 'string' || !same(named, escrow.address))
    throw new X402Refusal('invalid_payment_requirements', `extra.authCaptureEscrow must name this network's escrow ${escrow.address}`);
  const address = (field: string) => {
    const value = extra[field];
    if (typeof value !== 'string' || !ADDRESS.test(value)) throw new X402Refusal('invalid_payment_requirements', `extra.${field} must be an address`);
    return getAddress(value);
  };
  const whole = (field: string) => {
    const value = extra[field];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
      throw new X402Refusal('invalid_payment_requirements', `extra.${field} must be a whole number`);
    return String(value);
  };
  const salt = (paymentPayload.payload as { salt?: unknown }).salt;
  if (typeof salt !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(salt)) throw new X402Refusal('invalid_payload', 'the payload has no salt (32 bytes of hex)');
  const terms: WirePaymentInfo = {
    operator: address('captureAuthorizer'),
    payer: authorization.from,
    receiver: getAddress(requirements.payTo),
    token: getAddress(requirements.asset),
    maxAmount: authorization.value,
    preApprovalExpiry: authorization.validBefore,
    authorizationExpiry: whole('captureDeadline'),
    refundExpiry: whole('refundDeadline'),
    minFeeBps: whole('minFeeBps'),
    maxFeeBps: whole('maxFeeBps'),
    feeReceiver: address('feeRecipient'),
    salt: BigInt(salt).toString(),
  };
  if (terms.minFeeBps !== '0' || terms.maxFeeBps !== '0' || !same(terms.feeReceiver, zeroAddress))
    throw new X402Refusal(
      'invalid_payment_requirements',
      'authcap holds carry no fee: extra.minFeeBps and maxFeeBps must be 0 and feeRecipient the zero address',
    );
  const refusal = presignedHoldRefusal(fromWire(terms), authorization, 'ReceiveWithAuthorization', {
    isMerchant: (a) => context.merchants.length === 0 || context.merchants.some((m) => same(m, a)),
    token: terms.token,
    chainId: served.chainId,
    escrow: { escrow: escrow.address, paymentCollector: escrow.paymentCollector, refundCollector: escrow.refundCollector },
    nowSeconds: context.nowSeconds,
  });
  if (refusal) throw new X402Refusal(reasonOf(refusal.code), refusal.reason);
  return terms;
}

function reasonOf(code: string): X402Reason {
  if (code === 'recipient_mismatch') return 'invalid_exact_evm_payload_recipient_mismatch';
  if (code === 'validation_error') return 'invalid_payload';
  return 'invalid_payment_requirements';
}

/** What a resource server must put in `extra` for authcap to hold the payment: its operator, no fee, this escrow. */
export function supportedExtra(network: ServedNetwork, merchants: readonly Address[]): Record<string, unknown> | undefined {
  if (!network.escrow || merchants.length === 0) return undefined;
  return { captureAuthorizer: merchants[0], authCaptureEscrow: network.escrow.address, feeRecipient: zeroAddress, minFeeBps: 0, maxFeeBps: 0 };
}
