// Holds from outside, through the HTTP API of a dev stack on two networks (what `npm start` runs): a
// held payment of 10.00 → capture 3.00 → capture 2.50 → void gives the payer 4.50 back and the
// merchant 5.50, each step's escrow event on the chain once, on the first network in USDC and on the
// second in the 18-decimal DEUR18; a capture asked again with its Idempotency-Key is one capture, and
// one over what is held is refused and sends nothing.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, parseEventLogs, parseUnits, type Address, type Hex } from 'viem';
import type { DevJson, Stack } from '../../devstack/stack.js';
import { escrowAbi } from '../../domain/escrowAbi.js';
import { fromWire, toWire } from '../../domain/escrowCall.js';
import { holdAuthorizationMessage, holdNonce, paymentInfoHash } from '../../domain/escrow.js';
import { authorizationTypedData } from '../../domain/eip3009.js';
import { holdTerms } from '../../domain/hold.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { newOrderId, readApiResult, walletSign, type ApiResult } from '../support/api.js';
import { startTwoNetworkStack } from '../support/twoNetworkStack.js';

let running: Awaited<ReturnType<typeof startTwoNetworkStack>> | undefined;
let stack: Stack;
let escrows: Record<string, { escrow: Address; paymentCollector: Address }>;

beforeAll(async () => {
  running = await startTwoNetworkStack('holds');
  stack = running.stack;
  const file = JSON.parse(readFileSync(stack.devJson.configFile, 'utf8')) as {
    networks: { id: string; escrow?: { address: Address; paymentCollector: Address } }[];
  };
  escrows = Object.fromEntries(file.networks.map((n) => [n.id, { escrow: n.escrow!.address, paymentCollector: n.escrow!.paymentCollector }]));
}, 240_000);
afterAll(() => running?.stop());

const dev = (): DevJson => stack.devJson;

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResult> {
  const res = await fetch(`${dev().apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${dev().apiKey}`, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return readApiResult(res);
}

async function waitFor(id: string, done: (resource: any) => boolean, timeoutMs = 30_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const current = await api('GET', `/v1/authorizations/${id}`);
    if (done(current.body)) return current.body;
    if (Date.now() > until) throw new Error(`timed out: ${JSON.stringify(current.body.state)} ${JSON.stringify(current.body.captures)}`);
    await api('GET', `/v1/authorizations/${id}?wait=5&state=${current.body.state}`);
  }
}

const cases = [
  { network: 'eip155:31337', token: 'USDC', payerIndex: 11 },
  { network: 'eip155:31338', token: 'DEUR18', payerIndex: 12 },
] as const;

describe.each(cases)('a held payment on $network in $token', ({ network, token, payerIndex }) => {
  it('holds 10.00, captures 3.00 then 2.50 exactly once each, voids the rest: the payer gets 4.50 back, the merchant 5.50; refunds go back through the escrow', async () => {
    const net = dev().networks.find((n) => n.network === network)!;
    const served = net.tokens.find((t) => t.symbol === token)!;
    const units = (text: string) => parseUnits(text, served.decimals);
    const chain = createPublicClient({ transport: http(net.rpcUrl), pollingInterval: 100 });
    const balance = (account: Address) => chain.readContract({ address: served.address, abi: tokenAbi, functionName: 'balanceOf', args: [account] });
    const { escrow, paymentCollector } = escrows[network]!;
    const payer = dev().payers[payerIndex]!;
    const merchant = dev().merchantAddress;
    const fromBlock = await chain.getBlockNumber();
    const before = { payer: await balance(payer.address), merchant: await balance(merchant) };

    // The draft is the collector's ReceiveWithAuthorization of the hold's terms, as the escrow checks it.
    const created = await api('POST', '/v1/authorizations', { orderId: newOrderId('hold'), payer: payer.address, amount: '10.00', network, token, hold: true });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const draft = created.body;
    expect(draft.state).toBe('drafted');
    expect(draft.typedData.primaryType).toBe('ReceiveWithAuthorization');
    expect(draft.typedData.domain.verifyingContract.toLowerCase()).toBe(served.address.toLowerCase());
    const message = draft.typedData.message;
    expect(message.to.toLowerCase()).toBe(paymentCollector.toLowerCase());
    expect(BigInt(message.value)).toBe(units('10'));
    expect(message.validAfter.toString()).toBe('0');
    const terms = fromWire(draft.hold.terms);
    expect(terms.payer.toLowerCase()).toBe(payer.address.toLowerCase());
    expect(terms.token.toLowerCase()).toBe(served.address.toLowerCase());
    expect(terms.maxAmount).toBe(units('10'));
    expect(message.nonce).toBe(holdNonce(terms, net.chainId, escrow));
    expect(draft.hold.paymentInfoHash).toBe(paymentInfoHash(terms, net.chainId, escrow));
    expect(draft.amountCapturable).toBe('0');

    // Signed: the funds move into escrow at once; the answer comes once the hold is at depth.
    const signed = await api('POST', `/v1/authorizations/${draft.id}/signature`, { signature: walletSign(draft.typedData, payer.privateKey) });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    const held = signed.body.state === 'held' ? signed.body : await waitFor(draft.id, (r) => r.state !== 'holding');
    expect(held.state).toBe('held');
    expect(held.amountCapturable).toBe('10');
    expect(held.hold.amountHeld).toBe('10');
    expect(await balance(payer.address)).toBe(before.payer - units('10'));

    // A part, retried with its key: one capture.
    const first = await api('POST', `/v1/authorizations/${draft.id}/capture`, { amount: '3.00' }, { 'idempotency-key': `${draft.id}-part-1` });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.amountCaptured).toBe('3');
    expect(first.body.amountCapturable).toBe('7');
    expect(first.body.captures).toHaveLength(1);
    expect(first.body.captures[0]).toMatchObject({ amount: '3', status: 'succeeded', final: false });
    const again = await api('POST', `/v1/authorizations/${draft.id}/capture`, { amount: '3.00' }, { 'idempotency-key': `${draft.id}-part-1` });
    expect(again.status).toBe(200);
    expect(again.body.captures).toHaveLength(1);

    // More than is held: refused, nothing sent from the merchant key.
    const sentBefore = await chain.getTransactionCount({ address: merchant, blockTag: 'pending' });
    const over = await api('POST', `/v1/authorizations/${draft.id}/capture`, { amount: '7.01' }, { 'idempotency-key': `${draft.id}-over` });
    expect(over.status).toBe(422);
    expect(over.body.error.code).toBe('amount_exceeds_capturable');
    expect(over.body.error.message).toContain('7');
    expect(await chain.getTransactionCount({ address: merchant, blockTag: 'pending' })).toBe(sentBefore);

    const second = await api('POST', `/v1/authorizations/${draft.id}/capture`, { amount: '2.50' }, { 'idempotency-key': `${draft.id}-part-2` });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.amountCaptured).toBe('5.5');
    expect(second.body.amountCapturable).toBe('4.5');

    const voided = await api('POST', `/v1/authorizations/${draft.id}/void`, { reason: 'order shipped short' });
    expect(voided.status, JSON.stringify(voided.body)).toBe(200);
    const done = await waitFor(draft.id, (r) => r.state !== 'held');
    expect(done.state).toBe('captured');
    expect(done.amountCaptured).toBe('5.5');
    expect(done.amountCapturable).toBe('0');
    expect(done.hold.release).toMatchObject({ kind: 'void', amount: '4.5' });

    const listed = await api('GET', `/v1/authorizations/${draft.id}/captures`);
    expect(listed.body.data.map((c: any) => [c.amount, c.status])).toEqual([
      ['3', 'succeeded'],
      ['2.5', 'succeeded'],
    ]);

    // The chain's own word: the payer is 5.50 down, the merchant 5.50 up, the escrow holds nothing of it.
    expect(await balance(payer.address)).toBe(before.payer - units('5.5'));
    expect(await balance(merchant)).toBe(before.merchant + units('5.5'));
    const logs = await chain.getContractEvents({ address: escrow, abi: escrowAbi, fromBlock });
    const ours = parseEventLogs({ abi: escrowAbi, logs }).filter((l) => (l.args as { paymentInfoHash?: Hex }).paymentInfoHash === done.hold.paymentInfoHash);
    expect(ours.map((l) => [l.eventName, (l.args as { amount: bigint }).amount])).toEqual([
      ['PaymentAuthorized', units('10')],
      ['PaymentCaptured', units('3')],
      ['PaymentCaptured', units('2.5')],
      ['PaymentVoided', units('4.5')],
    ]);
    expect(done.captures.map((c: any) => c.transactionHash)).toEqual([ours[1]!.transactionHash, ours[2]!.transactionHash]);

    // Refunds go through the escrow's refund, never past what was captured, each with its PaymentRefunded.
    const refunded = await api(
      'POST',
      `/v1/authorizations/${draft.id}/refunds`,
      { amount: '2.00', reason: 'one item returned' },
      { 'idempotency-key': `${draft.id}-refund-1` },
    );
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(201);
    expect(refunded.body).toMatchObject({ state: 'succeeded', amount: '2' });
    const tooMuch = await api('POST', `/v1/authorizations/${draft.id}/refunds`, { amount: '3.51' });
    expect(tooMuch.body.error?.code, JSON.stringify(tooMuch.body)).toBe('refund_exceeds_captured');
    const rest = await api('POST', `/v1/authorizations/${draft.id}/refunds`, {}, { 'idempotency-key': `${draft.id}-refund-2` });
    expect(rest.status, JSON.stringify(rest.body)).toBe(201);
    expect(rest.body).toMatchObject({ state: 'succeeded', amount: '3.5' });
    const refundLogs = parseEventLogs({
      abi: escrowAbi,
      logs: await chain.getContractEvents({ address: escrow, abi: escrowAbi, fromBlock, eventName: 'PaymentRefunded' }),
    }).filter((l) => (l.args as { paymentInfoHash?: Hex }).paymentInfoHash === done.hold.paymentInfoHash);
    expect(refundLogs.map((l) => [l.transactionHash, (l.args as { amount: bigint }).amount])).toEqual([
      [refunded.body.transactionHash, units('2')],
      [rest.body.transactionHash, units('3.5')],
    ]);
    expect(await balance(payer.address)).toBe(before.payer);
    const after = await api('GET', `/v1/authorizations/${draft.id}`);
    expect(after.body.amountRefunded).toBe('5.5');
  });
});

describe('a pre-signed hold', () => {
  it('is taken like other pre-signed payloads: the collector’s authorization of terms this merchant operates, held at once, then captured', async () => {
    const net = dev().networks[0]!;
    const served = net.tokens[0]!;
    const { escrow, paymentCollector } = escrows[net.network]!;
    const payer = dev().payers[13]!;
    const chain = createPublicClient({ transport: http(net.rpcUrl) });
    const now = Number((await chain.getBlock()).timestamp);
    const terms = holdTerms({
      operator: dev().merchantAddress,
      receiver: dev().merchantAddress,
      payer: payer.address,
      token: served.address,
      amount: parseUnits('4', served.decimals),
      authorizeBy: now + 600,
      authorizationId: `presigned-${Math.random()}`,
    });
    const message = holdAuthorizationMessage(terms, net.chainId, { escrow, paymentCollector });
    const domain = { name: 'USD Coin', version: '2', chainId: net.chainId, verifyingContract: served.address };
    // The collector's ReceiveWithAuthorization, as any wallet gets it, signed by MetaMask's own library.
    const typedData = authorizationTypedData(domain, 'ReceiveWithAuthorization', message);
    const signature = walletSign(typedData, payer.privateKey);
    const body = {
      orderId: newOrderId('presigned-hold'),
      primaryType: 'ReceiveWithAuthorization',
      authorization: message,
      signature,
      network: net.network,
      hold: { paymentInfo: toWire(terms) },
    };

    // Terms that pay someone else are refused, and nothing is held.
    const elsewhere = { ...toWire(terms), receiver: payer.address };
    const refused = await api('POST', '/v1/authorizations', { ...body, orderId: newOrderId('presigned-hold'), hold: { paymentInfo: elsewhere } });
    expect(refused.body.error?.code ?? refused.body.state, JSON.stringify(refused.body)).toMatch(/recipient_mismatch|rejected/);

    const created = await api('POST', '/v1/authorizations', body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const held = await waitFor(created.body.id, (r) => r.state !== 'holding' && r.state !== 'drafting');
    expect(held.state).toBe('held');
    expect(held.hold.paymentInfoHash).toBe(paymentInfoHash(terms, net.chainId, escrow));
    const captured = await api('POST', `/v1/authorizations/${created.body.id}/capture`, { final: true }, { 'idempotency-key': `${created.body.id}-all` });
    expect(captured.status, JSON.stringify(captured.body)).toBe(200);
    expect(captured.body).toMatchObject({ state: 'captured', amountCaptured: '4', amountCapturable: '0' });
  });
});
