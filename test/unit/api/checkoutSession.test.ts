// The payer's session as the checkout API builds it: the network it is on (named, with the
// deployment's public RPC URLs), and the token's symbol and decimals from the resource, else the
// deployment's catalog, else the token itself (a deployment without configuration).
import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { checkoutSession, TokenInfoCache } from '../../../api/checkout/session.js';
import type { AuthorizationResource, HoldView } from '../../../domain/authorization.js';
import { Catalog, type ServedToken } from '../../../runtime/deployment/catalog.js';

const USDC = `0x${'a1'.repeat(20)}` as Address;
const DEUR = `0x${'b2'.repeat(20)}` as Address;
const PAYER = `0x${'c3'.repeat(20)}` as Address;
const MERCHANT = `0x${'d4'.repeat(20)}` as Address;
const COLLECTOR = `0x${'e5'.repeat(20)}` as Address;

const served = (address: Address, symbol: string, decimals: number): ServedToken => ({ address, name: symbol, version: '2', symbol, decimals, form: 'bytes' });
const catalog = new Catalog([
  { network: 'eip155:31337', chainId: 31337, name: 'Dev chain', publicRpcUrls: ['http://127.0.0.1:8545'], tokens: [served(USDC, 'USDC', 6)] },
  { network: 'eip155:31338', chainId: 31338, name: 'Dev chain 2', tokens: [served(USDC, 'USDC', 6), served(DEUR, 'DEUR18', 18)] },
]);

function resource(chainId: number, token: Address, extra: Partial<AuthorizationResource> = {}): AuthorizationResource {
  return {
    id: 'auth_1',
    orderId: 'order-1',
    state: 'drafted',
    primaryType: 'ReceiveWithAuthorization',
    amount: '1.5',
    amountCaptured: '0',
    amountCapturable: '0',
    captures: [],
    hold: null,
    amountRefunded: '0',
    authorization: { from: PAYER, to: MERCHANT, value: '1500000000000000000', validAfter: '0', validBefore: '2000000000', nonce: `0x${'00'.repeat(32)}` },
    domain: { name: 'x', version: '2', chainId, verifyingContract: token },
    typedData: null,
    cancellationTypedData: null,
    capture: null,
    cancellation: null,
    void: null,
    lastError: null,
    history: [],
    ...extra,
  };
}

/** A cache that must not be asked: the resource or the catalog should have answered. */
const noChain = { get: () => Promise.reject(new Error('the chain was read')) } as unknown as TokenInfoCache;
const context = (c?: Catalog, tokens: TokenInfoCache = noChain) => ({ merchantName: 'Shop', tokens, catalog: c, now: () => 0 });

describe('checkoutSession: the network', () => {
  it('is the one the resource names, with its name, and public RPC URLs ([] when none are configured)', async () => {
    const s = await checkoutSession(resource(31338, USDC, { network: 'eip155:31338' }), context(catalog));
    expect(s.network).toEqual({ id: 'eip155:31338', chainId: 31338, name: 'Dev chain 2', rpcUrls: [] });
    expect(s.token.chainId).toBe(31338);
    const first = await checkoutSession(resource(31337, USDC, { network: 'eip155:31337' }), context(catalog));
    expect(first.network).toEqual({ id: 'eip155:31337', chainId: 31337, name: 'Dev chain', rpcUrls: ['http://127.0.0.1:8545'] });
  });

  it('is found by the signed chain for records from before networks', async () => {
    const s = await checkoutSession(resource(31338, DEUR), context(catalog));
    expect(s.network?.name).toBe('Dev chain 2');
  });

  it('is the deployment’s default while a record from before networks is still being drafted', async () => {
    const s = await checkoutSession(resource(31337, USDC, { state: 'drafting', domain: null, authorization: null }), context(catalog));
    expect(s.network?.id).toBe('eip155:31337');
  });

  it('without a deployment: named by its CAIP-2 id, no RPC URLs; null when nothing names it', async () => {
    const cache = new TokenInfoCache(undefined);
    const s = await checkoutSession(resource(31337, USDC), context(undefined, cache));
    expect(s.network).toEqual({ id: 'eip155:31337', chainId: 31337, name: 'eip155:31337', rpcUrls: [] });
    const drafting = await checkoutSession(resource(31337, USDC, { state: 'drafting', domain: null, authorization: null }), context(undefined, cache));
    expect(drafting.network).toBeNull();
  });
});

describe('checkoutSession: the token', () => {
  it('takes symbol and decimals from the resource first', async () => {
    const s = await checkoutSession(resource(31338, DEUR, { network: 'eip155:31338', token: { address: DEUR, symbol: 'DEUR18', decimals: 18 } }), context());
    expect(s.token).toEqual({ address: DEUR, symbol: 'DEUR18', decimals: 18, chainId: 31338 });
  });

  it('else from the catalog, on the network the authorization is on', async () => {
    const s = await checkoutSession(resource(31338, DEUR, { network: 'eip155:31338' }), context(catalog));
    expect(s.token).toMatchObject({ symbol: 'DEUR18', decimals: 18 });
  });

  it('else from the token contract (the cache; USDC/6 without a node)', async () => {
    const s = await checkoutSession(resource(31337, USDC), context(undefined, new TokenInfoCache(undefined)));
    expect(s.token).toMatchObject({ symbol: 'USDC', decimals: 6 });
  });

  it('a captured amount is given in the token’s own decimals', async () => {
    const captured = resource(31338, DEUR, {
      network: 'eip155:31338',
      token: { address: DEUR, symbol: 'DEUR18', decimals: 18 },
      state: 'captured',
      capture: {
        transactionHash: `0x${'ee'.repeat(32)}`,
        blockNumber: '1',
        blockHash: null,
        submittedAt: null,
        preconfirmedAt: null,
        confirmedAt: null,
        by: 'authcap',
        amount: '1.25',
      },
    });
    expect((await checkoutSession(captured, context())).capture?.keptMinor).toBe('1250000000000000000');
  });
});

describe('checkoutSession: a hold', () => {
  const usdc = { address: USDC, symbol: 'USDC', decimals: 6 };
  const hold = (extra: Partial<HoldView> = {}): HoldView => ({
    paymentInfoHash: `0x${'ab'.repeat(32)}`,
    amountHeld: '0',
    authorizeTransactionHash: null,
    captureBefore: '2033-05-18T03:33:20.000Z',
    voidAt: '2033-05-18T02:33:20.000Z',
    refundBefore: '2033-06-17T03:33:20.000Z',
    terms: {
      operator: MERCHANT,
      payer: PAYER,
      receiver: MERCHANT,
      token: USDC,
      maxAmount: '12500000',
      preApprovalExpiry: '1999395200',
      authorizationExpiry: '2000000000',
      refundExpiry: '2002592000',
      minFeeBps: '0',
      maxFeeBps: '0',
      feeReceiver: `0x${'00'.repeat(20)}`,
      salt: '1',
    },
    release: null,
    ...extra,
  });
  // Signed to the escrow's payment collector, not to the merchant.
  const authorization = { from: PAYER, to: COLLECTOR, value: '12500000', validAfter: '0', validBefore: '1999395200', nonce: `0x${'00'.repeat(32)}` as const };
  const held = (extra: Partial<AuthorizationResource>) =>
    resource(31337, USDC, { network: 'eip155:31337', token: usdc, amount: '12.5', authorization, hold: hold(), ...extra });

  it('is null for a plain authorization', async () => {
    expect((await checkoutSession(resource(31337, USDC), context(catalog))).hold).toBeNull();
  });

  it('before signing: what will be held (nothing yet), until when (unix seconds), and the collector the wallet names; the merchant is the hold’s receiver', async () => {
    const s = await checkoutSession(held({ state: 'drafted' }), context(catalog));
    expect(s.hold).toEqual({ amountHeldMinor: '0', capturedMinor: '0', captureBefore: '2000000000', release: null, collector: COLLECTOR });
    expect(s.merchant).toEqual({ address: MERCHANT, name: 'Shop' });
    expect(s.amountMinor).toBe('12500000');
  });

  it('while held: what the escrow holds and what the merchant captured so far, in minor units', async () => {
    const s = await checkoutSession(
      held({ state: 'held', amountCaptured: '3', amountCapturable: '9.5', hold: hold({ amountHeld: '12.5' }) }),
      context(catalog),
    );
    expect(s.state).toBe('held');
    expect(s.hold).toMatchObject({ amountHeldMinor: '12500000', capturedMinor: '3000000', release: null });
    // Nothing to sign or cancel once the hold is placed.
    expect(s.typedData).toBeNull();
    expect(s.cancellationTypedData).toBeNull();
  });

  it('once over: what came back, in the token’s own decimals', async () => {
    const deur = { address: DEUR, symbol: 'DEUR18', decimals: 18 };
    const release = { kind: 'void' as const, amount: '4.5', transactionHash: `0x${'cd'.repeat(32)}` as const, at: '2026-01-01T00:00:00.000Z' };
    const s = await checkoutSession(
      resource(31338, DEUR, {
        network: 'eip155:31338',
        token: deur,
        state: 'captured',
        amount: '10',
        amountCaptured: '5.5',
        authorization: { ...authorization, value: '10000000000000000000' },
        hold: hold({ amountHeld: '10', release }),
      }),
      context(catalog),
    );
    expect(s.hold).toMatchObject({
      amountHeldMinor: '10000000000000000000',
      capturedMinor: '5500000000000000000',
      release: { kind: 'void', amountMinor: '4500000000000000000', transactionHash: release.transactionHash, at: release.at },
    });
  });
});
