// authcap as an x402 v2 facilitator, driven as the x402 SDK drives one: an express resource server
// (@x402/express) whose HTTPFacilitatorClient points at the suite's API /x402 with the facilitator
// key, and buyers paying with @x402/fetch. No mocks: every case reads the chain (the token's Transfer
// logs, balances, nonce states) and authcap's records (the authorization a settle makes: one per
// settled payload, orderId `x402:…`, captured with the settle's transaction). Payers are fresh keys
// minted by the token owner, so their balances and their Transfer logs are the test's alone.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { formatUnits, type Address, type Hex, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, chain, dev } from '../support/api.js';
import { sleep, type DemoKey } from '../support/lifecycle.js';
import { newPayer, sharedWorld, type World } from '../support/refunds.js';
import { expectApiError } from '../support/sideEffects.js';
import {
  advertised,
  authorizationOf,
  balanceOf,
  closeResourceServers,
  decodePaymentHeader,
  encodePaymentHeader,
  facilitatorBody,
  facilitatorCall,
  nonceUsed,
  paymentRequiredOf,
  paymentResponseOf,
  payingFetch,
  randomNonce,
  signatureOf,
  signExactPayload,
  startResourceServer,
  tokenEip712,
  transfersFrom,
  transfersIn,
  type PaymentPayload,
  type PaymentRequirements,
  type ResourceServer,
} from '../support/x402.js';

/** 1.25 tokens (6 decimals). */
const AMOUNT = 1_250_000n;
/** The price of the route the concurrent buyers pay: 0.07 tokens. */
const BULK_AMOUNT = 70_000n;
const BULK_PAYERS = 10;
const BULK_PER_PAYER = 5;
const TX_HASH = /^0x[0-9a-f]{64}$/;

/** An address that is none of authcap's merchant keys. */
const STRANGER: Address = privateKeyToAccount(generatePrivateKey()).address;

const VALID_BEFORE = 'invalid_exact_evm_payload_authorization_valid_before';
const NONCE_USED = 'invalid_exact_evm_nonce_already_used';

let world: World;
let server: ResourceServer;
let client: PublicClient;
let token: Address;
let merchant: Address;
let network: string;
let domain: { name: string; version: string };
let decimals: number;
/** What the `/paid` route charges. */
let paidRequirements: PaymentRequirements;

const sameAddress = (a: string | null | undefined, b: string) => a?.toLowerCase() === b.toLowerCase();
const lower = (a: string) => a.toLowerCase();

/** POST /x402/verify or /x402/settle with the facilitator key (or another). */
function facilitator(
  path: '/verify' | '/settle',
  payload: PaymentPayload,
  requirements: PaymentRequirements = payload.accepted,
  key: string | null = dev().facilitatorApiKey,
) {
  return facilitatorCall(dev().apiUrl, key, 'POST', path, facilitatorBody(payload, requirements));
}

async function settleOk(payload: PaymentPayload, requirements?: PaymentRequirements): Promise<Hex> {
  const res = await facilitator('/settle', payload, requirements);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body, JSON.stringify(res.body)).toMatchObject({ success: true, network });
  expect(sameAddress(res.body.payer, authorizationOf(payload).from), `settle payer ${res.body.payer}`).toBe(true);
  expect(res.body.transaction).toMatch(TX_HASH);
  return res.body.transaction;
}

async function expectVerifyRefused(payload: PaymentPayload, reason: string, requirements?: PaymentRequirements) {
  const res = await facilitator('/verify', payload, requirements);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body, JSON.stringify(res.body)).toMatchObject({ isValid: false, invalidReason: reason });
}

async function expectSettleRefused(payload: PaymentPayload, reason: string, requirements?: PaymentRequirements) {
  const res = await facilitator('/settle', payload, requirements);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body, JSON.stringify(res.body)).toMatchObject({ success: false, errorReason: reason, transaction: '' });
  expect(typeof res.body.network).toBe('string');
}

/** The payer's summaries, full resources read back (GET), once visibility lists `count` of them. */
async function authorizationsOf(payer: Address, count: number, timeoutMs = 20_000): Promise<any[]> {
  const listed = await vi.waitFor(
    async () => {
      const res = await api('GET', `/v1/authorizations?${new URLSearchParams({ payer, limit: '100' })}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data).toHaveLength(count);
      expect(res.body.data.map((a: { state: string }) => a.state)).toEqual(res.body.data.map(() => 'captured'));
      return res.body.data as { id: string }[];
    },
    { timeout: timeoutMs, interval: 250 },
  );
  return Promise.all(
    listed.map(async ({ id }) => {
      const res = await api('GET', `/v1/authorizations/${id}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    }),
  );
}

/** No authorization for this payer, after giving a wrongly started one time to show up in visibility. */
async function expectNoAuthorization(payer: Address, settleMs = 1_500) {
  await sleep(settleMs);
  const res = await api('GET', `/v1/authorizations?${new URLSearchParams({ payer })}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data, `authorizations of ${payer}`).toEqual([]);
}

/** The payer's authorizations that hold or took money, or still could: any not rejected, voided, expired or canceled. */
async function livingAuthorizations(payer: Address): Promise<{ id: string; state: string }[]> {
  const res = await api('GET', `/v1/authorizations?${new URLSearchParams({ payer, limit: '100' })}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as { id: string; state: string }[]).filter((a) => !['rejected', 'voided', 'expired', 'canceled'].includes(a.state));
}

/** An authorization the x402 settle made: captured, for this payload, with this transaction. */
function expectSettledAuthorization(a: any, payload: PaymentPayload, transaction: Hex) {
  const signed = authorizationOf(payload);
  expect(a.state).toBe('captured');
  expect(a.orderId).toMatch(/^x402:/);
  expect(a.network).toBe(network);
  expect(a.amount).toBe(formatUnits(BigInt(signed.value), decimals));
  expect(a.capture?.transactionHash).toBe(transaction);
  expect(a.authorization).toMatchObject({ value: signed.value, nonce: signed.nonce });
  expect(sameAddress(a.authorization.from, signed.from) && sameAddress(a.authorization.to, signed.to)).toBe(true);
}

/** Exactly one Transfer payer→merchant of `value` in `hash`, and nothing else moved by the token there. */
async function expectOnePayment(hash: Hex, payer: Address, value: bigint) {
  expect((await transfersIn(client, token, hash)).map((t) => ({ ...t, from: lower(t.from), to: lower(t.to) }))).toEqual([
    { from: lower(payer), to: lower(merchant), value, transactionHash: hash },
  ]);
}

const handledCount = (path: string) => server.handled.get(path) ?? 0;

beforeAll(async () => {
  const d = dev();
  world = sharedWorld();
  client = chain() as unknown as PublicClient;
  token = d.tokenAddress;
  merchant = d.merchantAddress;
  network = `eip155:${d.chainId}`;
  domain = await tokenEip712(client, token);
  decimals = await client.readContract({ address: token, abi: tokenAbi, functionName: 'decimals' });
  server = await startResourceServer({
    apiUrl: d.apiUrl,
    facilitatorKey: d.facilitatorApiKey,
    chainId: d.chainId,
    tokenAddress: token,
    domain,
    payTo: merchant,
    routes: [
      { path: '/paid', amount: AMOUNT },
      { path: '/paid-twin', amount: AMOUNT },
      { path: '/stranger', amount: AMOUNT, payTo: STRANGER },
      { path: '/bulk', amount: BULK_AMOUNT },
    ],
  });
  paidRequirements = server.requirements('/paid');
});

afterAll(() => closeResourceServers());

describe('the facilitator API: /x402/supported and who may call /x402', () => {
  it('supported lists exact on this network (x402 v2), no extensions, and the merchant keys as eip155:* signers', async () => {
    const res = await facilitatorCall(dev().apiUrl, dev().facilitatorApiKey, 'GET', '/supported');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.kinds).toContainEqual(expect.objectContaining({ x402Version: 2, scheme: 'exact', network }));
    expect(res.body.extensions).toEqual([]);
    const signers: string[] = res.body.signers?.['eip155:*'] ?? [];
    expect(signers.map(lower).sort()).toEqual(dev().merchantAddresses.map(lower).sort());
  });

  it('an order-service key gets 403 on /x402; the facilitator key gets 403 on /v1; no key gets 401; a refused settle pays nothing', async () => {
    const d = dev();
    const p = await newPayer(world, AMOUNT);
    const payload = await signExactPayload({ privateKey: p.privateKey, requirements: paidRequirements });
    const body = facilitatorBody(payload);
    for (const [method, path] of [
      ['GET', '/supported'],
      ['POST', '/verify'],
      ['POST', '/settle'],
    ] as const) {
      const asOrderService = await facilitatorCall(d.apiUrl, d.apiKey, method, path, method === 'POST' ? body : undefined);
      expectApiError(asOrderService, 403, 'forbidden');
      const asOperator = await facilitatorCall(d.apiUrl, d.operatorApiKey, method, path, method === 'POST' ? body : undefined);
      expectApiError(asOperator, 403, 'forbidden');
      const anonymous = await facilitatorCall(d.apiUrl, null, method, path, method === 'POST' ? body : undefined);
      expectApiError(anonymous, 401, 'unauthorized');
    }
    expectApiError(await api('GET', '/v1/authorizations', undefined, { key: d.facilitatorApiKey }), 403, 'forbidden');
    expectApiError(
      await api('POST', '/v1/authorizations', { orderId: 'x402-role-check', payer: p.address, amount: '1' }, { key: d.facilitatorApiKey }),
      403,
      'forbidden',
    );
    // The settle the order-service key was refused did nothing.
    expect(await nonceUsed(client, token, p.address, authorizationOf(payload).nonce)).toBe(false);
    expect(await balanceOf(client, token, p.address)).toBe(AMOUNT);
    await expectNoAuthorization(p.address);
  });
});

describe('a paid request through @x402/express and @x402/fetch', () => {
  it('402 with the requirements → paid → 200 with PAYMENT-RESPONSE naming the one transfer; authcap holds it as captured', async () => {
    const p = await newPayer(world, AMOUNT * 2n);
    const unpaid = await fetch(`${server.url}/paid`);
    expect(unpaid.status).toBe(402);
    const required = paymentRequiredOf(unpaid);
    expect(required?.x402Version).toBe(2);
    expect(required?.accepts).toEqual([
      expect.objectContaining({
        scheme: 'exact',
        network,
        asset: token,
        amount: String(AMOUNT),
        payTo: merchant,
        maxTimeoutSeconds: 60,
        extra: expect.objectContaining(domain),
      }),
    ]);
    const handledBefore = handledCount('/paid');

    const buyer = payingFetch(p.privateKey);
    const res = await buyer.fetch(`${server.url}/paid`);
    const text = await res.text();
    expect(res.status, `${text} ${JSON.stringify(server.calls.slice(-3))}`).toBe(200);
    expect(JSON.parse(text)).toEqual({ ok: true, path: '/paid' });
    expect(handledCount('/paid')).toBe(handledBefore + 1);
    const settlement = paymentResponseOf(res);
    expect(settlement).toMatchObject({ success: true, network });
    expect(sameAddress(settlement?.payer, p.address)).toBe(true);
    const transaction = settlement!.transaction as Hex;
    expect(transaction).toMatch(TX_HASH);

    // The payment the buyer sent: one, an EIP-3009 authorization to the merchant of the price.
    expect(buyer.sent).toHaveLength(1);
    const payload = decodePaymentHeader(buyer.sent[0]!);
    const signed = authorizationOf(payload);
    expect(signed).toMatchObject({ to: merchant, value: String(AMOUNT) });
    // The resource server verified, then settled, this payload with authcap.
    // (A settle answered settlement_pending is asked once more by the SDK: the last answer counts.)
    const ours = server.calls.filter((c) => c.nonce === signed.nonce);
    expect(ours.map((c) => c.kind).join(',')).toMatch(/^verify(,settle){1,2}$/);
    expect(ours.filter((c) => c.error)).toEqual([]);
    expect(ours[0]!.result).toMatchObject({ isValid: true });
    expect(ours.at(-1)!.result).toMatchObject({ success: true, transaction: settlement!.transaction });

    // The chain: exactly one transfer out of the payer, in that transaction, of the price, to the merchant.
    await expectOnePayment(transaction, p.address, AMOUNT);
    const out = await transfersFrom(client, token, p.address);
    expect(out.map((t) => t.transactionHash)).toEqual([transaction]);
    expect(await balanceOf(client, token, p.address)).toBe(AMOUNT);
    expect(await nonceUsed(client, token, p.address, signed.nonce)).toBe(true);

    // authcap: one authorization, captured with that transaction.
    const [a, ...more] = await authorizationsOf(p.address, 1);
    expect(more).toEqual([]);
    expectSettledAuthorization(a, payload, transaction);
    expect(a.capture.by).toBe('authcap');
  });

  it(`${BULK_PAYERS * BULK_PER_PAYER} paid requests at once: all 200, as many distinct transactions and transfers, each captured by authcap`, async () => {
    const payers = await Promise.all(Array.from({ length: BULK_PAYERS }, () => newPayer(world, BULK_AMOUNT * BigInt(BULK_PER_PAYER))));
    const startBlock = await client.getBlockNumber();
    const handledBefore = handledCount('/bulk');
    const buyers = payers.map((p) => payingFetch(p.privateKey));
    const results = await Promise.all(
      buyers.flatMap((buyer) =>
        Array.from({ length: BULK_PER_PAYER }, async () => {
          const res = await buyer.fetch(`${server.url}/bulk`);
          return { status: res.status, body: await res.text(), settlement: paymentResponseOf(res) };
        }),
      ),
    );
    const total = BULK_PAYERS * BULK_PER_PAYER;
    expect(
      results.filter((r) => r.status !== 200),
      'requests that did not get 200',
    ).toEqual([]);
    expect(handledCount('/bulk')).toBe(handledBefore + total);
    expect(results.every((r) => r.settlement?.success === true)).toBe(true);
    const transactions = new Set(results.map((r) => r.settlement!.transaction));
    expect(transactions.size).toBe(total);
    for (const hash of transactions) expect(hash).toMatch(TX_HASH);
    // Each buyer sent one payment per request, each its own nonce.
    const nonces = new Set(buyers.flatMap((b) => b.sent.map((h) => authorizationOf(decodePaymentHeader(h)).nonce)));
    expect(nonces.size).toBe(total);

    // The chain: exactly `total` transfers out of these payers, one in each transaction, all to the merchant.
    const out = await transfersFrom(
      client,
      token,
      payers.map((p) => p.address),
      startBlock,
    );
    expect(out).toHaveLength(total);
    expect(new Set(out.map((t) => t.transactionHash))).toEqual(transactions);
    expect(out.every((t) => sameAddress(t.to, merchant) && t.value === BULK_AMOUNT)).toBe(true);
    for (const p of payers) expect(await balanceOf(client, token, p.address)).toBe(0n);

    // authcap: every payer's five authorizations captured, each with one of those transactions.
    const captured = (await Promise.all(payers.map((p) => authorizationsOf(p.address, BULK_PER_PAYER, 30_000)))).flat();
    expect(captured).toHaveLength(total);
    expect(captured.every((a) => /^x402:/.test(a.orderId))).toBe(true);
    expect(new Set(captured.map((a) => a.capture?.transactionHash))).toEqual(transactions);
    expect(new Set(captured.map((a) => a.authorization.nonce))).toEqual(nonces);
  }, 150_000);

  it('the same payment replayed to a second route with the same price (and to the first again): 402, no second transfer', async () => {
    const p = await newPayer(world, AMOUNT * 2n);
    const buyer = payingFetch(p.privateKey);
    const first = await buyer.fetch(`${server.url}/paid`);
    expect(first.status, await first.text()).toBe(200);
    const transaction = paymentResponseOf(first)!.transaction as Hex;
    expect(buyer.sent).toHaveLength(1);
    const header = buyer.sent[0]!;
    const nonce = authorizationOf(decodePaymentHeader(header)).nonce;
    const twinHandled = handledCount('/paid-twin');
    const paidHandled = handledCount('/paid');

    for (const path of ['/paid-twin', '/paid']) {
      const replay = await fetch(`${server.url}${path}`, { headers: { 'PAYMENT-SIGNATURE': header } });
      expect(replay.status, `${path}: ${await replay.text()}`).toBe(402);
      expect(paymentRequiredOf(replay)?.error, path).toBe(NONCE_USED);
      expect(paymentResponseOf(replay)?.success ?? false).toBe(false);
    }
    expect(handledCount('/paid-twin')).toBe(twinHandled);
    expect(handledCount('/paid')).toBe(paidHandled);
    // The resource server only verified the replays: authcap refused them, so it never settled one.
    const calls = server.calls.filter((c) => c.nonce === nonce).map((c) => c.kind);
    expect(calls.join(',')).toMatch(/^verify(,settle){1,2},verify,verify$/);

    await sleep(1_000);
    const out = await transfersFrom(client, token, p.address);
    expect(out.map((t) => t.transactionHash)).toEqual([transaction]);
    expect(await balanceOf(client, token, p.address)).toBe(AMOUNT);
    expect(await authorizationsOf(p.address, 1)).toHaveLength(1);
  });

  it('a payload past its validBefore: 402 with the reason, nothing paid; /x402/verify and /x402/settle answer the reason', async () => {
    const p = await newPayer(world, AMOUNT);
    const required = await advertised(`${server.url}/paid`);
    const accepted = required.accepts[0]!;
    const now = Math.floor(Date.now() / 1000);
    const payload = await signExactPayload({
      privateKey: p.privateKey,
      requirements: accepted,
      resource: required.resource,
      authorization: { validAfter: '0', validBefore: String(now - 10) },
    });
    const handledBefore = handledCount('/paid');
    const res = await fetch(`${server.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': encodePaymentHeader(payload) } });
    expect(res.status, await res.text()).toBe(402);
    expect(paymentRequiredOf(res)?.error).toBe(VALID_BEFORE);
    expect(handledCount('/paid')).toBe(handledBefore);

    await expectVerifyRefused(payload, VALID_BEFORE);
    await expectSettleRefused(payload, VALID_BEFORE);
    // Within the 6 s margin counts as expired too.
    const closing = await signExactPayload({
      privateKey: p.privateKey,
      requirements: accepted,
      authorization: { validBefore: String(Math.floor(Date.now() / 1000) + 3) },
    });
    await expectVerifyRefused(closing, VALID_BEFORE);
    await expectSettleRefused(closing, VALID_BEFORE);

    expect(await transfersFrom(client, token, p.address)).toEqual([]);
    expect(await balanceOf(client, token, p.address)).toBe(AMOUNT);
    expect(await nonceUsed(client, token, p.address, authorizationOf(payload).nonce)).toBe(false);
    await expectNoAuthorization(p.address);
  });

  it('a route whose payTo is not an authcap merchant: 402 invalid_payment_requirements; nothing paid, no authorization', async () => {
    const p = await newPayer(world, AMOUNT);
    const buyer = payingFetch(p.privateKey);
    const res = await buyer.fetch(`${server.url}/stranger`);
    expect(res.status, await res.text()).toBe(402);
    expect(paymentRequiredOf(res)?.error).toBe('invalid_payment_requirements');
    expect(handledCount('/stranger')).toBe(0);
    // The buyer did sign (to the stranger): a direct settle of it is refused as well and pays nobody.
    expect(buyer.sent).toHaveLength(1);
    const payload = decodePaymentHeader(buyer.sent[0]!);
    expect(sameAddress(authorizationOf(payload).to, STRANGER)).toBe(true);
    await expectSettleRefused(payload, 'invalid_payment_requirements');

    expect(await transfersFrom(client, token, p.address)).toEqual([]);
    expect(await balanceOf(client, token, p.address)).toBe(AMOUNT);
    expect(await balanceOf(client, token, STRANGER)).toBe(0n);
    expect(await nonceUsed(client, token, p.address, authorizationOf(payload).nonce)).toBe(false);
    await expectNoAuthorization(p.address);
  });

  it('a payer without the funds: 402 insufficient_funds, nothing paid (not later either, once the funds arrive)', async () => {
    const p = await newPayer(world, AMOUNT - 1n);
    const buyer = payingFetch(p.privateKey);
    const res = await buyer.fetch(`${server.url}/paid`);
    expect(res.status, await res.text()).toBe(402);
    expect(paymentRequiredOf(res)?.error).toBe('insufficient_funds');
    const payload = decodePaymentHeader(buyer.sent[0]!);
    await expectVerifyRefused(payload, 'insufficient_funds');
    const settled = await facilitator('/settle', payload);
    expect(settled.status, JSON.stringify(settled.body)).toBe(200);
    expect(settled.body, JSON.stringify(settled.body)).toMatchObject({ success: false, transaction: '' });
    expect(settled.body.errorReason).toBe('insufficient_funds');

    // The funds arrive afterwards: a refused settle stays refused, nothing is taken on its own.
    await world.ownerWrite('mint', [p.address, 1n]);
    await sleep(2_500);
    expect(await transfersFrom(client, token, p.address)).toEqual([]);
    expect(await balanceOf(client, token, p.address)).toBe(AMOUNT);
    expect(await nonceUsed(client, token, p.address, authorizationOf(payload).nonce)).toBe(false);
    expect(await livingAuthorizations(p.address)).toEqual([]);
  });
});

describe('/x402/settle directly', () => {
  it('the same body settled twice, then another twice at once: each one transaction, one transfer, one authorization', async () => {
    const p = await newPayer(world, AMOUNT * 2n);
    const first = await signExactPayload({ privateKey: p.privateKey, requirements: paidRequirements });
    const tx1 = await settleOk(first);
    expect(await settleOk(first)).toBe(tx1);
    await expectOnePayment(tx1, p.address, AMOUNT);

    const second = await signExactPayload({ privateKey: p.privateKey, requirements: paidRequirements });
    // Two resource servers (or a retry racing the first try) settle the same body at once: both are told the one transaction.
    const racing = await Promise.all([facilitator('/settle', second), facilitator('/settle', second)]);
    expect(
      racing.map((r) => ({ status: r.status, success: r.body?.success, errorReason: r.body?.errorReason, errorMessage: r.body?.errorMessage })),
      'both concurrent settles',
    ).toEqual([
      { status: 200, success: true, errorReason: undefined, errorMessage: undefined },
      { status: 200, success: true, errorReason: undefined, errorMessage: undefined },
    ]);
    const a = racing[0]!.body.transaction as Hex;
    const b = racing[1]!.body.transaction as Hex;
    expect(a).toMatch(TX_HASH);
    expect(a).toBe(b);
    expect(a).not.toBe(tx1);
    await expectOnePayment(a, p.address, AMOUNT);
    expect(await settleOk(second)).toBe(a);

    const out = await transfersFrom(client, token, p.address);
    expect(out.map((t) => t.transactionHash).sort()).toEqual([tx1, a].sort());
    expect(await balanceOf(client, token, p.address)).toBe(0n);
    const records = await authorizationsOf(p.address, 2);
    const byNonce = new Map(records.map((r) => [r.authorization.nonce as string, r]));
    expectSettledAuthorization(byNonce.get(authorizationOf(first).nonce), first, tx1);
    expectSettledAuthorization(byNonce.get(authorizationOf(second).nonce), second, a);
    // A settled payload does not verify again.
    await expectVerifyRefused(first, NONCE_USED);
  });

  it('the payer used the nonce onchain first (transferWithAuthorization sent by someone else): settle answers that transaction, verify nonce_already_used', async () => {
    const p = await newPayer(world, AMOUNT);
    const payload = await signExactPayload({ privateKey: p.privateKey, requirements: paidRequirements });
    const a = authorizationOf(payload);
    const outside = await world.ownerWrite('transferWithAuthorization', [
      a.from,
      a.to,
      BigInt(a.value),
      BigInt(a.validAfter),
      BigInt(a.validBefore),
      a.nonce,
      signatureOf(payload),
    ]);
    await expectOnePayment(outside.transactionHash, p.address, AMOUNT);

    expect(await settleOk(payload)).toBe(outside.transactionHash);
    await expectVerifyRefused(payload, NONCE_USED);
    expect(await settleOk(payload)).toBe(outside.transactionHash);

    await sleep(1_000);
    const out = await transfersFrom(client, token, p.address);
    expect(out.map((t) => t.transactionHash)).toEqual([outside.transactionHash]);
    expect(await balanceOf(client, token, p.address)).toBe(0n);
    // Whatever authcap recorded of it names that transaction, never one of its own.
    const listed = await api('GET', `/v1/authorizations?${new URLSearchParams({ payer: p.address })}`);
    for (const { id } of listed.body.data as { id: string }[]) {
      const record = await api('GET', `/v1/authorizations/${id}`);
      if (record.body.capture) expect(record.body.capture.transactionHash).toBe(outside.transactionHash);
    }
  });

  it('the nonce was used for another transfer (another recipient and value): settle and verify refuse, nothing more moves', async () => {
    const p = await newPayer(world, AMOUNT + 1n);
    const payload = await signExactPayload({ privateKey: p.privateKey, requirements: paidRequirements });
    const nonce = authorizationOf(payload).nonce;
    // The payer spent the same nonce on 1 unit to someone else.
    const other = await signExactPayload({
      privateKey: p.privateKey,
      requirements: { ...paidRequirements, payTo: STRANGER, amount: '1' },
      authorization: { nonce },
    });
    const o = authorizationOf(other);
    const outside = await world.ownerWrite('transferWithAuthorization', [
      o.from,
      o.to,
      BigInt(o.value),
      BigInt(o.validAfter),
      BigInt(o.validBefore),
      o.nonce,
      signatureOf(other),
    ]);

    await expectVerifyRefused(payload, NONCE_USED);
    await expectSettleRefused(payload, NONCE_USED);
    await sleep(1_000);
    const out = await transfersFrom(client, token, p.address);
    expect(out.map((t) => [t.transactionHash, lower(t.to), t.value])).toEqual([[outside.transactionHash, lower(STRANGER), 1n]]);
    expect(await balanceOf(client, token, p.address)).toBe(AMOUNT);
    expect(await livingAuthorizations(p.address)).toEqual([]);
  });

  it('verify changes nothing: no authorization, no transfer, the nonce unused; the payload still settles afterwards', async () => {
    const p = await newPayer(world, AMOUNT);
    const payload = await signExactPayload({ privateKey: p.privateKey, requirements: paidRequirements });
    for (let i = 0; i < 2; i += 1) {
      const res = await facilitator('/verify', payload);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body, JSON.stringify(res.body)).toMatchObject({ isValid: true });
      expect(sameAddress(res.body.payer, p.address)).toBe(true);
    }
    await expectNoAuthorization(p.address);
    expect(await transfersFrom(client, token, p.address)).toEqual([]);
    expect(await balanceOf(client, token, p.address)).toBe(AMOUNT);
    expect(await nonceUsed(client, token, p.address, authorizationOf(payload).nonce)).toBe(false);

    const tx = await settleOk(payload);
    await expectOnePayment(tx, p.address, AMOUNT);
    const [a] = await authorizationsOf(p.address, 1);
    expectSettledAuthorization(a, payload, tx);
  });
});

describe('refused payloads: /x402/verify and /x402/settle answer the reason (HTTP 200) and pay nothing', () => {
  interface Refusal {
    name: string;
    reason: string;
    make: (p: DemoKey) => Promise<{ payload: PaymentPayload; requirements: PaymentRequirements }>;
  }
  const signed = async (
    p: DemoKey,
    requirements: PaymentRequirements,
    more: Omit<Parameters<typeof signExactPayload>[0], 'privateKey' | 'requirements'> = {},
  ) => ({
    payload: await signExactPayload({ privateKey: p.privateKey, requirements, ...more }),
    requirements,
  });
  const cases: Refusal[] = [
    {
      name: 'authorization.to is not requirements.payTo',
      reason: 'invalid_exact_evm_payload_recipient_mismatch',
      make: (p) => signed(p, paidRequirements, { authorization: { to: STRANGER } }),
    },
    {
      name: 'payTo is not one of authcap’s merchant addresses',
      reason: 'invalid_payment_requirements',
      make: (p) => signed(p, { ...paidRequirements, payTo: STRANGER }),
    },
    {
      name: 'an asset authcap does not serve',
      reason: 'invalid_payment_requirements',
      make: (p) => signed(p, { ...paidRequirements, asset: '0x000000000000000000000000000000000000dEaD' }),
    },
    {
      name: 'validAfter in the future',
      reason: 'invalid_exact_evm_payload_authorization_valid_after',
      make: (p) => signed(p, paidRequirements, { authorization: { validAfter: String(Math.floor(Date.now() / 1000) + 600) } }),
    },
    {
      name: 'value is not the amount',
      reason: 'invalid_exact_evm_payload_authorization_value_mismatch',
      make: (p) => signed(p, paidRequirements, { authorization: { value: String(AMOUNT + 1n) } }),
    },
    {
      name: 'signed by another key',
      reason: 'invalid_exact_evm_payload_signature',
      make: (p) => signed(p, paidRequirements, { signerKey: generatePrivateKey() }),
    },
    {
      name: 'signed for another chain id than the network',
      reason: 'invalid_exact_evm_payload_signature',
      make: (p) => signed(p, paidRequirements, { domain: { chainId: 1 } }),
    },
    {
      name: 'a network authcap does not serve',
      reason: 'invalid_network',
      make: (p) => signed(p, { ...paidRequirements, network: 'eip155:1' }),
    },
    {
      name: 'a scheme other than exact',
      reason: 'unsupported_scheme',
      make: (p) => signed(p, { ...paidRequirements, scheme: 'upto' }),
    },
    {
      name: 'a payload without an authorization',
      reason: 'invalid_payload',
      make: async (p) => {
        const { payload, requirements } = await signed(p, paidRequirements);
        return { payload: { ...payload, payload: { signature: signatureOf(payload) } }, requirements };
      },
    },
  ];
  const payers = new Map<string, DemoKey>();

  beforeAll(async () => {
    const funded = await Promise.all(cases.map(() => newPayer(world, AMOUNT * 2n)));
    for (const [i, c] of cases.entries()) payers.set(c.name, funded[i]!);
  }, 120_000);

  it.each(cases)('$name → $reason', async ({ name, reason, make }) => {
    const p = payers.get(name)!;
    const { payload, requirements } = await make(p);
    const nonce = (payload.payload as { authorization?: { nonce: Hex } }).authorization?.nonce ?? randomNonce();
    await expectVerifyRefused(payload, reason, requirements);
    await expectSettleRefused(payload, reason, requirements);
    expect(await balanceOf(client, token, p.address)).toBe(AMOUNT * 2n);
    expect(await nonceUsed(client, token, p.address, nonce)).toBe(false);
  });

  it('none of them moved money or left an authorization that could (a refused attempt may be recorded as rejected or voided)', async () => {
    await sleep(1_500);
    for (const c of cases) {
      const p = payers.get(c.name)!;
      expect(await transfersFrom(client, token, p.address), c.name).toEqual([]);
      expect(await balanceOf(client, token, p.address), c.name).toBe(AMOUNT * 2n);
      expect(await livingAuthorizations(p.address), c.name).toEqual([]);
    }
  });
});
