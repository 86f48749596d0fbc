// The payer's session as the checkout API builds it: the network it is on (named, with the
// deployment's public RPC URLs), and the token's symbol and decimals from the resource, else the
// deployment's catalog, else the token itself (a deployment without configuration).
import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { checkoutSession, TokenInfoCache } from '../../../api/checkout/session.js';
import type { AuthorizationResource } from '../../../domain/authorization.js';
import { Catalog, type ServedToken } from '../../../runtime/deployment/catalog.js';

const USDC = `0x${'a1'.repeat(20)}` as Address;
const DEUR = `0x${'b2'.repeat(20)}` as Address;
const PAYER = `0x${'c3'.repeat(20)}` as Address;
const MERCHANT = `0x${'d4'.repeat(20)}` as Address;

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
