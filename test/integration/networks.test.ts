// One deployment, two networks, three tokens (issue 27): every lifecycle runs on each network and
// token, checked against that chain's own logs and balances, and against the other chain, where
// nothing may happen. The stack is the dev stack with `networks: 2`: anvils 31337 (USDC) and 31338
// (USDC and the 18-decimal DEUR18), one worker and API serving both.
import { createPublicClient, formatUnits, http, parseEventLogs, parseUnits, type Address, type Hex, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '../../devstack/stack.js';
import { startTwoNetworkStack } from '../support/twoNetworkStack.js';
import { authorizationTypedData, type AuthorizationMessage } from '../../domain/eip3009.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { walletSign } from '../support/api.js';

interface Leg {
  label: string;
  network: string;
  chainId: number;
  token: { address: Address; symbol: string; decimals: number };
  reader: PublicClient;
  rpcUrl: string;
}

let stack: Stack;
let running: Awaited<ReturnType<typeof startTwoNetworkStack>> | undefined;
const legs: Leg[] = [];

beforeAll(async () => {
  running = await startTwoNetworkStack('two-networks');
  stack = running.stack;
  for (const n of stack.devJson.networks) {
    for (const token of n.tokens)
      legs.push({
        label: `${token.symbol} on ${n.network}`,
        network: n.network,
        chainId: n.chainId,
        token,
        reader: createPublicClient({ transport: http(n.rpcUrl) }),
        rpcUrl: n.rpcUrl,
      });
  }
}, 300_000);

afterAll(() => running?.stop());

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stack.devJson.apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.devJson.apiKey}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

let orders = 0;
const orderId = (label: string) => `networks-${label}-${Date.now()}-${orders++}`;

/** A fresh payer holding `whole` tokens of the leg's token (minted by the dev token's owner), and gas. */
async function fundedPayer(leg: Leg, whole: string): Promise<{ address: Address; privateKey: Hex }> {
  const privateKey = generatePrivateKey();
  const { address } = privateKeyToAccount(privateKey);
  await mintTo(leg, address, whole);
  return { address, privateKey };
}

async function mintTo(leg: Leg, address: Address, whole: string): Promise<void> {
  const owner = stack.devJson.tokenOwner!;
  const { createWalletClient, defineChain } = await import('viem');
  const chain = defineChain({
    id: leg.chainId,
    name: leg.network,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [leg.rpcUrl] } },
  });
  const wallet = createWalletClient({ chain, transport: http(leg.rpcUrl), account: privateKeyToAccount(owner.privateKey) });
  const hash = await wallet.writeContract({
    address: leg.token.address,
    abi: tokenAbi,
    functionName: 'mint',
    args: [address, parseUnits(whole, leg.token.decimals)],
  });
  await leg.reader.waitForTransactionReceipt({ hash });
}

const balance = (leg: Leg, account: Address) =>
  leg.reader.readContract({ address: leg.token.address, abi: tokenAbi, functionName: 'balanceOf', args: [account] });

async function waitFor(id: string, states: string[], timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await api('GET', `/v1/authorizations/${id}?wait=5`);
    if (states.includes(body.state)) return body;
    if (Date.now() > deadline) throw new Error(`${id} is ${body.state}, not ${states.join(' or ')}`);
  }
}

async function createOn(leg: Leg, payer: Address, amount: string, extra: Record<string, unknown> = {}) {
  const res = await api('POST', '/v1/authorizations', {
    orderId: orderId(leg.token.symbol),
    payer,
    amount,
    network: leg.network,
    token: leg.token.symbol,
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function stored(leg: Leg, payer: { address: Address; privateKey: Hex }, amount: string, extra: Record<string, unknown> = {}) {
  const drafted = await createOn(leg, payer.address, amount, extra);
  // The payer signs for this network's token: the domain is that token's on that chain.
  expect(drafted.typedData.domain.chainId).toBe(leg.chainId);
  expect(drafted.typedData.domain.verifyingContract.toLowerCase()).toBe(leg.token.address.toLowerCase());
  const signed = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: walletSign(drafted.typedData, payer.privateKey) });
  expect(signed.status, JSON.stringify(signed.body)).toBe(200);
  return signed.body;
}

/** The logs of a transaction on the leg's chain; the other chain has no such transaction. */
async function receiptOn(leg: Leg, hash: Hex) {
  const receipt = await leg.reader.getTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  for (const other of legs.filter((l) => l.network !== leg.network)) await expect(other.reader.getTransactionReceipt({ hash })).rejects.toThrow();
  return parseEventLogs({ abi: tokenAbi, logs: receipt.logs.filter((l) => l.address.toLowerCase() === leg.token.address.toLowerCase()) });
}

describe.each([0, 1, 2])('lifecycles on leg %i', (i) => {
  const leg = () => legs[i]!;

  it('create → sign → capture: the network and token are on the resource, the money moves on that chain only', async () => {
    const payer = await fundedPayer(leg(), '100');
    const amount = leg().token.decimals === 18 ? '12.345678901234567891' : '12.5';
    const authorization = await stored(leg(), payer, amount);
    expect(authorization.network).toBe(leg().network);
    expect(authorization.token).toEqual({ address: expect.stringMatching(/^0x/), symbol: leg().token.symbol, decimals: leg().token.decimals });
    expect(authorization.amount).toBe(amount);
    const captured = await api('POST', `/v1/authorizations/${authorization.id}/capture`, {});
    expect([200, 202]).toContain(captured.status);
    const done = await waitFor(authorization.id, ['captured']);
    const logs = await receiptOn(leg(), done.capture.transactionHash);
    const transfer = logs.find((l) => l.eventName === 'Transfer');
    // Exact in the token's own decimals (18 digits for DEUR18).
    expect(transfer?.eventName === 'Transfer' && transfer.args.value).toBe(parseUnits(amount, leg().token.decimals));
    expect(await balance(leg(), payer.address)).toBe(parseUnits('100', leg().token.decimals) - parseUnits(amount, leg().token.decimals));
    // Listed under its network and token.
    const listed = await api('GET', `/v1/authorizations?network=${leg().network}&token=${leg().token.address}&orderId=${encodeURIComponent(done.orderId)}`);
    expect(listed.body.data.map((a: any) => [a.id, a.network, a.token])).toEqual([[done.id, leg().network, leg().token.address.toLowerCase()]]);
  });

  it('partial capture, then a refund: both in the token, on its chain', async () => {
    const payer = await fundedPayer(leg(), '50');
    const unit = (v: string) => parseUnits(v, leg().token.decimals);
    const authorization = await stored(leg(), payer, '10');
    const kept = leg().token.decimals === 18 ? '7.000000000000000001' : '7.25';
    const captured = await api('POST', `/v1/authorizations/${authorization.id}/capture`, { amount: kept });
    expect([200, 202], JSON.stringify(captured.body)).toContain(captured.status);
    const done = await waitFor(authorization.id, ['captured']);
    expect(done.amountCaptured).toBe(kept);
    await expect.poll(() => balance(leg(), payer.address), { timeout: 30_000 }).toBe(unit('50') - unit(kept));
    const refund = await api('POST', `/v1/authorizations/${authorization.id}/refunds`, { amount: '1.5', reason: 'returned one item' });
    expect([200, 201, 202], JSON.stringify(refund.body)).toContain(refund.status);
    await expect.poll(() => balance(leg(), payer.address), { timeout: 60_000 }).toBe(unit('50') - unit(kept) + unit('1.5'));
    await expect.poll(async () => (await api('GET', `/v1/authorizations/${authorization.id}`)).body.amountRefunded, { timeout: 30_000 }).toBe('1.5');
    // The release of what was not kept, then the refund: each in the token's decimals, naming the chain.
    const refunds = (await api('GET', `/v1/authorizations/${authorization.id}/refunds`)).body.data;
    const released = formatUnits(unit('10') - unit(kept), leg().token.decimals);
    expect(refunds.map((r: any) => [r.amount, r.state, r.network, r.token.symbol])).toEqual([
      [released, 'succeeded', leg().network, leg().token.symbol],
      ['1.5', 'succeeded', leg().network, leg().token.symbol],
    ]);
  });

  it('the payer cancels: the nonce is canceled on this chain and not on the other', async () => {
    const payer = await fundedPayer(leg(), '5');
    const authorization = await stored(leg(), payer, '1');
    const typed = authorization.cancellationTypedData;
    expect(typed.domain.chainId).toBe(leg().chainId);
    const res = await api('POST', `/v1/authorizations/${authorization.id}/cancel`, { signature: walletSign(typed, payer.privateKey) });
    expect([200, 202], JSON.stringify(res.body)).toContain(res.status);
    await waitFor(authorization.id, ['canceled']);
    const nonce = authorization.authorization.nonce as Hex;
    const state = (l: Leg) =>
      l.reader.readContract({ address: l.token.address, abi: tokenAbi, functionName: 'authorizationState', args: [payer.address, nonce] });
    expect(await state(leg())).toBe(true);
    for (const other of legs.filter((l) => l !== leg())) expect(await state(other)).toBe(false);
  });

  it('void, and expiry at validBefore: nothing moves', async () => {
    const payer = await fundedPayer(leg(), '5');
    const voided = await stored(leg(), payer, '2');
    const res = await api('POST', `/v1/authorizations/${voided.id}/void`, { reason: 'order canceled' });
    expect([200, 202], JSON.stringify(res.body)).toContain(res.status);
    await waitFor(voided.id, ['voided']);
    const expiring = await stored(leg(), payer, '3', { validForSeconds: 4 });
    await waitFor(expiring.id, ['expired'], 60_000);
    expect(await balance(leg(), payer.address)).toBe(parseUnits('5', leg().token.decimals));
  });
});

describe('what names a network and token', () => {
  it('the OpenAPI document has them: request fields, list filters, the resource and the refund', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    const create = doc.paths['/v1/authorizations'].post.requestBody.content['application/json'].schema;
    const bodies = JSON.stringify(create);
    expect(bodies).toContain('"network"');
    expect(bodies).toContain('"token"');
    const filters = doc.paths['/v1/authorizations'].get.parameters.map((p: any) => p.name);
    expect(filters).toEqual(expect.arrayContaining(['network', 'token']));
    expect(Object.keys(doc.components.schemas.Authorization.properties)).toEqual(expect.arrayContaining(['network', 'token']));
    expect(Object.keys(doc.components.schemas.Refund.properties)).toEqual(expect.arrayContaining(['network', 'token']));
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).toEqual(expect.arrayContaining(['network_not_served', 'token_not_served']));
  });

  it('with two networks a request that names none is refused, with what is served', async () => {
    const res = await api('POST', '/v1/authorizations', { orderId: orderId('unnamed'), payer: stack.devJson.payers[0]!.address, amount: '1' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.message).toMatch(/network/);
  });

  it('an unserved network and token are refused by code, and nothing starts', async () => {
    const payer = stack.devJson.payers[0]!.address;
    const network = await api('POST', '/v1/authorizations', { orderId: orderId('x'), payer, amount: '1', network: 'eip155:8453' });
    expect([network.status, network.body.error.code]).toEqual([422, 'network_not_served']);
    const token = await api('POST', '/v1/authorizations', { orderId: orderId('y'), payer, amount: '1', network: legs[0]!.network, token: 'DEUR18' });
    expect([token.status, token.body.error.code]).toEqual([422, 'token_not_served']);
    const listed = await api('GET', `/v1/authorizations?payer=${payer}&limit=100`);
    expect(listed.body.data.filter((a: any) => /^networks-(x|y)-/.test(a.orderId))).toEqual([]);
  });

  it('too many decimals for the token is refused; 18 decimals are exact on DEUR18', async () => {
    const usdc = legs.find((l) => l.token.decimals === 6)!;
    const res = await api('POST', '/v1/authorizations', {
      orderId: orderId('decimals'),
      payer: stack.devJson.payers[0]!.address,
      amount: '1.0000001',
      network: usdc.network,
      token: usdc.token.address,
    });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
    expect(res.body.error.message).toMatch(/7 decimal places; the token has 6/);
  });

  it('the same payer and nonce on two networks are two authorizations; a payload signed for one is refused on the other', async () => {
    const [a, b] = [legs[0]!, legs[1]!];
    const payerA = await fundedPayer(a, '10');
    const payerKey = payerA.privateKey;
    await mintTo(b, payerA.address, '10');
    const merchant = stack.devJson.merchantAddress;
    const now = Math.floor(Date.now() / 1000);
    const nonce = `0x${'ab'.repeat(32)}` as Hex;
    const message = { from: payerA.address, to: merchant, value: '1000000', validAfter: String(now - 60), validBefore: String(now + 3600), nonce };
    const domainOf = (leg: Leg) => ({ name: 'USD Coin', version: '2', chainId: leg.chainId, verifyingContract: leg.token.address });
    const signFor = (leg: Leg, m: AuthorizationMessage = message) =>
      walletSign(authorizationTypedData(domainOf(leg), 'TransferWithAuthorization', m), payerKey);
    const body = (signature: Hex, network: string) => ({
      orderId: orderId('presigned'),
      primaryType: 'TransferWithAuthorization',
      authorization: message,
      signature,
      network,
      token: 'USDC',
    });
    const onA = await api('POST', '/v1/authorizations', body(signFor(a), a.network));
    const onB = await api('POST', '/v1/authorizations', body(signFor(b), b.network));
    expect([onA.status, onB.status], JSON.stringify([onA.body, onB.body])).toEqual([201, 201]);
    expect(onA.body.id).not.toBe(onB.body.id);
    expect([onA.body.state, onB.body.state]).toEqual(['stored', 'stored']);
    // Signed for a, sent as b: the signature does not verify under b's domain.
    const crossed = await api('POST', '/v1/authorizations', body(signFor(a), b.network));
    expect(crossed.status).toBe(422);
    expect(['invalid_signature', 'nonce_already_held']).toContain(crossed.body.error.code);
    const fresh = { ...message, nonce: `0x${'cd'.repeat(32)}` as Hex };
    const signedForA = signFor(a, fresh);
    const wrongNetwork = await api('POST', '/v1/authorizations', { ...body(signedForA, b.network), authorization: fresh });
    expect([wrongNetwork.status, wrongNetwork.body.error.code]).toEqual([422, 'invalid_signature']);
    // With its domain, the payload says its own network: naming the other is a mismatch.
    const withDomain = await api('POST', '/v1/authorizations', {
      ...body(signedForA, b.network),
      authorization: fresh,
      domain: domainOf(a),
    });
    expect([withDomain.status, withDomain.body.error.code]).toEqual([422, 'domain_mismatch']);
  });
});

// Last in this file: it stops the second chain for good.
describe('one network down', () => {
  it('/readyz says degraded and names it; the other network captures as before', async () => {
    const [first, second] = [legs.find((l) => l.chainId === 31337)!, legs.find((l) => l.chainId === 31338)!];
    const ready = await fetch(`${stack.devJson.apiUrl}/readyz`).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
    expect(Object.keys(ready.body.checks.networks).sort()).toEqual(['eip155:31337', 'eip155:31338']);

    await stack.processes.anvils![1]!.stop();
    const degraded = await fetch(`${stack.devJson.apiUrl}/readyz`).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    expect(degraded.status).toBe(200);
    expect(degraded.body.status).toBe('degraded');
    expect(degraded.body.checks.networks[second.network].ok).toBe(false);
    expect(degraded.body.checks.networks[first.network].ok).toBe(true);

    const payer = await fundedPayer(first, '5');
    const authorization = await stored(first, payer, '2');
    const captured = await api('POST', `/v1/authorizations/${authorization.id}/capture`, {});
    expect([200, 202]).toContain(captured.status);
    expect((await waitFor(authorization.id, ['captured'], 30_000)).network).toBe(first.network);
  });
});
