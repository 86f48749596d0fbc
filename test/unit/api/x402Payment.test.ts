// The x402 payment read out of a facilitator request, judged without I/O: every refusal carries the
// specification's reason, and a payment that passes is exactly what the payer signed.
import { describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { readPayment, sameAuthorization, x402OrderId, type PaymentContext } from '../../../api/x402/payment.js';
import { X402Refusal } from '../../../api/x402/reasons.js';
import type { FacilitatorRequest } from '../../../api/x402/wire.js';

const token = '0x5FbDB2315678afecb367f032d93F642f64180aa3' as Address;
const merchant = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as Address;
const payer = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' as Address;
const NOW = 1_800_000_000;
const context: PaymentContext = {
  networks: [
    {
      network: 'eip155:8453',
      chainId: 8453,
      name: 'Base',
      tokens: [{ address: token, name: 'USD Coin', version: '2', symbol: 'USDC', decimals: 6, form: 'vrs' as never }],
    },
  ],
  merchants: [merchant],
  nowSeconds: NOW,
};

function request(
  overrides: { requirements?: Record<string, unknown>; authorization?: Record<string, unknown>; payload?: Record<string, unknown>; version?: number } = {},
): FacilitatorRequest {
  const requirements = {
    scheme: 'exact',
    network: 'eip155:8453',
    asset: token,
    amount: '10000',
    payTo: merchant,
    maxTimeoutSeconds: 60,
    extra: { name: 'USD Coin', version: '2' },
    ...overrides.requirements,
  };
  const authorization = {
    from: payer,
    to: merchant,
    value: '10000',
    validAfter: '0',
    validBefore: String(NOW + 60),
    nonce: `0x${'ab'.repeat(32)}`,
    ...overrides.authorization,
  };
  return {
    x402Version: overrides.version ?? 2,
    paymentPayload: {
      x402Version: overrides.version ?? 2,
      resource: { url: 'https://shop.example/report' },
      accepted: requirements,
      payload: { authorization, signature: `0x${'11'.repeat(65)}`, ...overrides.payload },
    },
    paymentRequirements: requirements,
  } as FacilitatorRequest;
}

function reasonOf(req: FacilitatorRequest, ctx = context): string {
  try {
    readPayment(req, ctx);
  } catch (err) {
    if (err instanceof X402Refusal) return err.reason;
    throw err;
  }
  return 'accepted';
}

describe('readPayment', () => {
  it('reads a v2 exact payment as the authorization the payer signed, on the served token', () => {
    const payment = readPayment(request(), context);
    expect(payment).toMatchObject({
      x402Version: 2,
      network: 'eip155:8453',
      chainId: 8453,
      resource: 'https://shop.example/report',
      domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: token },
      authorization: { from: payer, to: merchant, value: '10000', validAfter: '0', validBefore: String(NOW + 60) },
    });
  });

  it('reads a v1 payment: the network by its x402 name, maxAmountRequired, the resource in the requirements', () => {
    const requirements = {
      scheme: 'exact',
      network: 'base',
      asset: token,
      maxAmountRequired: '10000',
      resource: 'https://shop.example/v1',
      payTo: merchant,
      maxTimeoutSeconds: 60,
    };
    const req = {
      x402Version: 1,
      paymentPayload: {
        x402Version: 1,
        scheme: 'exact',
        network: 'base',
        payload: {
          authorization: {
            from: payer,
            to: merchant,
            value: '10000',
            validAfter: String(NOW - 600),
            validBefore: String(NOW + 60),
            nonce: `0x${'cd'.repeat(32)}`,
          },
          signature: `0x${'11'.repeat(65)}`,
        },
      },
      paymentRequirements: requirements,
    } as FacilitatorRequest;
    const payment = readPayment(req, context);
    expect(payment.network).toBe('eip155:8453');
    expect(payment.requestedNetwork).toBe('base');
    expect(payment.resource).toBe('https://shop.example/v1');
  });

  it.each([
    ['another scheme', request({ requirements: { scheme: 'upto' } }), 'unsupported_scheme'],
    ['a network not served', request({ requirements: { network: 'eip155:1' } }), 'invalid_network'],
    ['an asset not served', request({ requirements: { asset: merchant } }), 'invalid_payment_requirements'],
    ['payTo not a merchant address', request({ requirements: { payTo: payer }, authorization: { to: payer } }), 'invalid_payment_requirements'],
    ["another token's EIP-712 name", request({ requirements: { extra: { name: 'USDC', version: '2' } } }), 'invalid_payment_requirements'],
    [
      'an authorization to someone else',
      request({ authorization: { to: '0x90F79bf6EB2c4f870365E785982E1f101E93b906' } }),
      'invalid_exact_evm_payload_recipient_mismatch',
    ],
    ['another amount', request({ authorization: { value: '9999' } }), 'invalid_exact_evm_payload_authorization_value_mismatch'],
    ['a window that has closed', request({ authorization: { validBefore: String(NOW - 1) } }), 'invalid_exact_evm_payload_authorization_valid_before'],
    [
      'a window closing within the margin',
      request({ authorization: { validBefore: String(NOW + 5) } }),
      'invalid_exact_evm_payload_authorization_valid_before',
    ],
    ['a window not open yet', request({ authorization: { validAfter: String(NOW + 30) } }), 'invalid_exact_evm_payload_authorization_valid_after'],
    ['a Permit2 payload', request({ payload: { authorization: undefined, permit2Authorization: {} } }), 'invalid_payload'],
    ['x402 version 3', request({ version: 3 }), 'invalid_x402_version'],
  ])('refuses %s with its reason', (_what, req, reason) => {
    expect(reasonOf(req)).toBe(reason);
  });

  it('refuses a payload whose chosen requirements differ from the server’s', () => {
    const req = request();
    req.paymentPayload.accepted = { ...req.paymentRequirements, network: 'eip155:84532' };
    expect(reasonOf(req)).toBe('invalid_network');
    req.paymentPayload.accepted = { ...req.paymentRequirements, scheme: 'upto' };
    expect(reasonOf(req)).toBe('invalid_scheme');
  });

  it('leaves the recipient to the worker when the API was given no merchant address', () => {
    expect(reasonOf(request({ requirements: { payTo: payer }, authorization: { to: payer } }), { ...context, merchants: [] })).toBe('accepted');
  });
});

describe('the order an x402 payment is', () => {
  it('is one per (chain, token, payer, nonce), whatever the spelling of the addresses', () => {
    const a = readPayment(request(), context);
    const b = readPayment(request({ authorization: { from: payer.toLowerCase() } }), context);
    expect(x402OrderId(a)).toBe(x402OrderId(b));
    expect(x402OrderId(a)).toBe(`x402:8453:${token.toLowerCase()}:${payer.toLowerCase()}:0x${'ab'.repeat(32)}`);
    expect(x402OrderId(a).length).toBeLessThanOrEqual(200);
    const other = readPayment(request({ authorization: { nonce: `0x${'ac'.repeat(32)}` as Hex } }), context);
    expect(x402OrderId(other)).not.toBe(x402OrderId(a));
  });

  it('is the same payment only when every signed field is the same', () => {
    const a = readPayment(request(), context).authorization;
    expect(sameAuthorization(a, { ...a, from: a.from.toLowerCase() as Address })).toBe(true);
    expect(sameAuthorization(a, { ...a, value: '10001' })).toBe(false);
    expect(sameAuthorization(a, { ...a, validBefore: String(NOW + 61) })).toBe(false);
  });
});
