// An x402 `exact` payment read out of a facilitator request and judged without I/O: the scheme, the
// network and token this deployment serves, the recipient (one of the merchant's addresses, and the
// one the payer signed for), the amount and the time window. What needs the chain (signature of a
// contract wallet, balance, nonce) is chainChecks.ts's; what settles it is settle.ts's.
import { getAddress, type Address, type Hex } from 'viem';
import type { ServedNetwork, ServedToken } from '../../runtime/deployment/catalog.js';
import { normalizeNetwork } from '../../runtime/deployment/schema.js';
import type { AuthorizationMessage, AuthorizationPrimaryType, TokenDomain } from '../../domain/eip3009.js';
import type { WirePaymentInfo } from '../../domain/escrowCall.js';
import { AUTH_CAPTURE, heldTerms } from './authCapture.js';
import { exactPayloadSchema, type FacilitatorRequest } from './wire.js';
import { X402Refusal } from './reasons.js';

/** What a payload must leave of its window for the transfer to be sent and mined: the SDK's own margin. */
export const VALID_BEFORE_MARGIN_SECONDS = 6;

export interface X402Payment {
  x402Version: 1 | 2;
  scheme: 'exact' | typeof AUTH_CAPTURE;
  /** exact: TransferWithAuthorization to payTo; auth-capture: ReceiveWithAuthorization to the escrow's collector. */
  primaryType: AuthorizationPrimaryType;
  /** auth-capture: the escrow terms the payer signed for, as authcap's pre-signed hold takes them. */
  hold?: { paymentInfo: WirePaymentInfo };
  /** CAIP-2, as every answer names it. */
  network: string;
  /** The network as the request named it (a v1 server names it by word), for the answers. */
  requestedNetwork: string;
  chainId: number;
  token: ServedToken;
  domain: TokenDomain;
  authorization: AuthorizationMessage;
  signature: Hex;
  /** The URL paid for, when the request says (v2: the payload's resource; v1: the requirements'). */
  resource?: string;
}

export interface PaymentContext {
  networks: readonly ServedNetwork[];
  /** The merchant's addresses: the only recipients authcap settles to (empty: the worker alone judges). */
  merchants: readonly Address[];
  nowSeconds: number;
  /** false: leave the time window to the caller (a settle asked again after it closed still learns the outcome). */
  checkWindow?: boolean;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The payment, or the X402Refusal that says why it cannot be paid. */
export function readPayment(request: FacilitatorRequest, context: PaymentContext): X402Payment {
  const { paymentPayload: payload, paymentRequirements: requirements } = request;
  const version = payload.x402Version;
  if (version !== 1 && version !== 2) throw new X402Refusal('invalid_x402_version', `x402 version ${version} is not served (1 and 2 are)`);
  if (request.x402Version !== undefined && request.x402Version !== version)
    throw new X402Refusal('invalid_x402_version', `the request says x402 version ${request.x402Version}, its payload ${version}`);
  // What the payer chose must be what the server asks: v2 carries the choice, v1 its scheme and network.
  const chosen = version === 2 ? payload.accepted : { scheme: payload.scheme, network: payload.network };
  if (!chosen) throw new X402Refusal('invalid_payload', 'the payment payload has no `accepted` requirements');
  const scheme = requirements.scheme;
  if (scheme !== 'exact' && !(scheme === AUTH_CAPTURE && version === 2))
    throw new X402Refusal('unsupported_scheme', `scheme "${scheme}" is not settled here (only "exact", and "auth-capture" in x402 v2)`);
  if (chosen.scheme !== scheme) throw new X402Refusal('invalid_scheme', `the payload is for scheme "${chosen.scheme}", the requirements "${scheme}"`);
  if (chosen.network !== requirements.network)
    throw new X402Refusal('invalid_network', `the payload is for network ${chosen.network}, the requirements ${requirements.network}`);
  const caip2 = normalizeNetwork(requirements.network);
  const served = caip2 ? context.networks.find((n) => n.network === caip2) : undefined;
  if (!served) {
    const names = context.networks.map((n) => n.network).join(', ');
    throw new X402Refusal('invalid_network', `network ${requirements.network} is not served here (served: ${names || 'none'})`);
  }
  const token = served.tokens.find((t) => same(t.address, requirements.asset));
  if (!token) throw new X402Refusal('invalid_payment_requirements', `asset ${requirements.asset} is not a token served on ${served.network}`);
  const extra = requirements.extra ?? {};
  if ((extra.name !== undefined && extra.name !== token.name) || (extra.version !== undefined && extra.version !== token.version)) {
    throw new X402Refusal(
      'invalid_payment_requirements',
      `the requirements name the token's EIP-712 domain ${String(extra.name)} v${String(extra.version)}; it is ${token.name} v${token.version}`,
    );
  }
  if (!/^0x[0-9a-fA-F]{40}$/.test(requirements.payTo)) throw new X402Refusal('invalid_payment_requirements', 'payTo is not an address');
  if (context.merchants.length > 0 && !context.merchants.some((m) => same(m, requirements.payTo)))
    throw new X402Refusal('invalid_payment_requirements', `payTo ${requirements.payTo} is not this merchant's address: authcap settles only to its own keys`);
  const amount = version === 2 ? requirements.amount : requirements.maxAmountRequired;
  if (amount === undefined || !/^\d{1,78}$/.test(amount) || BigInt(amount) === 0n)
    throw new X402Refusal('invalid_payment_requirements', `the requirements' ${version === 2 ? 'amount' : 'maxAmountRequired'} is not a positive integer`);

  const parsed = exactPayloadSchema.safeParse(payload.payload);
  if (!parsed.success) {
    const permit2 = 'permit2Authorization' in payload.payload;
    throw new X402Refusal(
      'invalid_payload',
      permit2 ? 'Permit2 payloads are not settled here: sign an EIP-3009 authorization' : 'the payload is not an EIP-3009 authorization and its signature',
    );
  }
  const { authorization: signed, signature } = parsed.data;
  const authorization: AuthorizationMessage = {
    from: getAddress(signed.from),
    to: getAddress(signed.to),
    value: signed.value,
    validAfter: signed.validAfter,
    validBefore: signed.validBefore,
    nonce: signed.nonce.toLowerCase() as Hex,
  };
  if (authorization.value !== BigInt(amount).toString())
    throw new X402Refusal(
      'invalid_exact_evm_payload_authorization_value_mismatch',
      `the authorization is for ${authorization.value}, the requirements ask ${amount}`,
    );
  // exact: a TransferWithAuthorization to payTo; auth-capture: the escrow collector's ReceiveWithAuthorization of a hold's terms.
  const hold = scheme === AUTH_CAPTURE ? { paymentInfo: heldTerms(request, authorization, served, context) } : undefined;
  if (!hold && !same(authorization.to, requirements.payTo))
    throw new X402Refusal('invalid_exact_evm_payload_recipient_mismatch', `the authorization pays ${authorization.to}, the requirements ${requirements.payTo}`);
  if (context.checkWindow !== false) {
    const refusal = windowRefusal(authorization, context.nowSeconds);
    if (refusal) throw refusal;
  }
  const resource = version === 2 ? payload.resource?.url : requirements.resource;
  return {
    x402Version: version,
    scheme: hold ? AUTH_CAPTURE : 'exact',
    primaryType: hold ? 'ReceiveWithAuthorization' : 'TransferWithAuthorization',
    network: served.network,
    requestedNetwork: requirements.network,
    chainId: served.chainId,
    token,
    domain: { name: token.name, version: token.version, chainId: served.chainId, verifyingContract: token.address },
    authorization,
    signature: signature as Hex,
    ...(hold ? { hold } : {}),
    ...(resource ? { resource } : {}),
  };
}

/** Why the authorization cannot be sent now (its window closed, or closes too soon, or is not open yet), if so. */
export function windowRefusal(authorization: AuthorizationMessage, nowSeconds: number): X402Refusal | undefined {
  if (BigInt(authorization.validBefore) < BigInt(nowSeconds + VALID_BEFORE_MARGIN_SECONDS))
    return new X402Refusal(
      'invalid_exact_evm_payload_authorization_valid_before',
      `validBefore ${authorization.validBefore} has passed, or leaves too little time to settle`,
    );
  if (BigInt(authorization.validAfter) > BigInt(nowSeconds))
    return new X402Refusal('invalid_exact_evm_payload_authorization_valid_after', `validAfter ${authorization.validAfter} is still ahead`);
  return undefined;
}

/**
 * The order an x402 payment is: one per (network, token, payer, nonce), which EIP-3009 lets be paid
 * once. A settle of the same payload finds it, whichever server or API process sends it.
 */
export function x402OrderId(payment: Pick<X402Payment, 'chainId' | 'token' | 'authorization'>): string {
  const { chainId, token, authorization } = payment;
  return `x402:${chainId}:${token.address.toLowerCase()}:${authorization.from.toLowerCase()}:${authorization.nonce.toLowerCase()}`;
}

/** The same signed authorization (the signature may be spelled otherwise: it signs the same message). */
export function sameAuthorization(a: AuthorizationMessage, b: AuthorizationMessage): boolean {
  return (
    same(a.from, b.from) &&
    same(a.to, b.to) &&
    a.value === b.value &&
    a.validAfter === b.validAfter &&
    a.validBefore === b.validBefore &&
    same(a.nonce, b.nonce)
  );
}
