// The relayer sends a held payment's escrow calls (issue 37): the authorize under the hold's own nonce,
// captures and refunds only while the escrow says what the requester expects of the hold, so a part
// already landed or pooled is never sent twice, whatever the relayer or its requester forgot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPublicClient, defineChain, http, parseEventLogs, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { readTokenDomain } from '../../activities/tokenDomain.js';
import { createChainContext, type ChainContext } from '../../activities/chainContext.js';
import { createRelayerActivities } from '../../activities/relayer.js';
import { startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';
import { deployDevToken, devAccounts } from '../../devstack/token.js';
import { deployDevEscrow } from '../../devstack/escrow.js';
import { authorizationTypes } from '../../domain/eip3009.js';
import { holdAuthorizationMessage, paymentInfoHash, type EscrowAddresses, type PaymentInfo } from '../../domain/escrow.js';
import { escrowAbi } from '../../domain/escrowAbi.js';
import { toWire, type EscrowCall } from '../../domain/escrowCall.js';
import { holdTerms } from '../../domain/hold.js';
import type { BroadcastOutcome, RelayRequest } from '../../domain/relay.js';

let anvil: Anvil;
let ctx: ChainContext;
let escrow: EscrowAddresses;
let payerKey: Hex;
const replyTo = { workflowId: 'nobody', runId: 'none' };
const chainOf = (a: Anvil) =>
  defineChain({ id: a.chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [a.rpcUrl] } } });

beforeAll(async () => {
  anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0 });
  const accounts = devAccounts(2);
  payerKey = accounts.payers[0]!.privateKey;
  const tokenAddress = await deployDevToken({ rpcUrl: anvil.rpcUrl, chain: chainOf(anvil), accounts });
  escrow = await deployDevEscrow({ rpcUrl: anvil.rpcUrl, chain: chainOf(anvil) });
  ctx = await createChainContext({
    rpcUrl: anvil.rpcUrl,
    tokenAddress,
    merchantPrivateKey: accounts.merchant.privateKey,
    validitySeconds: 900,
    confirmations: 1,
  });
  ctx.escrow = escrow;
}, 60_000);
afterAll(async () => {
  await anvil?.stop();
});

const client = () => createPublicClient({ chain: chainOf(anvil), transport: http(anvil.rpcUrl) });
const merchantCount = () => client().getTransactionCount({ address: ctx.merchant, blockTag: 'pending' });
let holds = 0;

async function newHold(amount = 10_000_000n): Promise<{ terms: PaymentInfo; authorize: RelayRequest }> {
  const payer = privateKeyToAccount(payerKey);
  const now = Number((await client().getBlock()).timestamp);
  const terms = holdTerms({
    operator: ctx.merchant,
    receiver: ctx.merchant,
    payer: payer.address,
    token: ctx.tokenAddress,
    amount,
    authorizeBy: now + 3_600,
    authorizationId: `hold-${++holds}`,
  });
  const message = holdAuthorizationMessage(terms, ctx.chainId, escrow);
  const domain = await readTokenDomain(ctx);
  const signature = await payer.signTypedData({
    domain: { ...domain, chainId: Number(domain.chainId) },
    types: authorizationTypes,
    primaryType: 'ReceiveWithAuthorization',
    message: { ...message, value: BigInt(message.value), validAfter: BigInt(message.validAfter), validBefore: BigInt(message.validBefore) },
  });
  return {
    terms,
    authorize: request(`authorize-${holds}`, { action: 'authorize', paymentInfo: toWire(terms), amount: amount.toString(), signature, nonce: message.nonce }),
  };
}

function request(id: string, call: Omit<EscrowCall, 'kind'>): RelayRequest {
  return { requestId: id, replyTo, replyOn: 'failure', call: { kind: 'escrow', ...call } };
}

async function broadcast(items: RelayRequest[]): Promise<BroadcastOutcome> {
  const relayer = createRelayerActivities(ctx);
  const startNonce = await relayer.relayerAccountNonce();
  return new MockActivityEnvironment().run(relayer.broadcastBatch, { startNonce, items, sentAt: Date.now() });
}

async function state(terms: PaymentInfo) {
  const [, capturable, refundable] = await client().readContract({
    address: escrow.escrow,
    abi: escrowAbi,
    functionName: 'paymentState',
    args: [paymentInfoHash(terms, ctx.chainId, escrow.escrow)],
  });
  return { capturable, refundable };
}

async function mined(hash: Hex) {
  const receipt = await client().waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return parseEventLogs({ abi: escrowAbi, logs: receipt.logs })
    .filter((l) => l.eventName !== 'TokenStoreCreated')
    .map((l) => l.eventName);
}

describe('the relayer and a held payment', () => {
  it('authorizes a hold once: asked again after it landed, the answer is the transaction that made it', async () => {
    const { terms, authorize } = await newHold();
    const first = await broadcast([authorize]);
    expect(first.refused).toEqual([]);
    expect(await mined(first.sent[0]!.hash)).toEqual(['PaymentAuthorized']);
    expect(await state(terms)).toEqual({ capturable: 10_000_000n, refundable: 0n });
    const before = await merchantCount();
    const again = await broadcast([{ ...authorize, requestId: 'authorize-again' }]);
    expect(again.sent).toEqual([]);
    expect(again.known).toEqual([{ requestId: 'authorize-again', transactionHash: first.sent[0]!.hash, accountNonce: first.sent[0]!.accountNonce }]);
    expect(await merchantCount()).toBe(before);
  });

  it('sends a capture only while the hold is as expected: the same part asked twice is captured once', async () => {
    const { terms, authorize } = await newHold();
    await mined((await broadcast([authorize])).sent[0]!.hash);
    const part = request('part-1', { action: 'capture', paymentInfo: toWire(terms), amount: '3000000', expect: { capturable: '10000000' } });
    const sent = await broadcast([part]);
    expect(sent.sent).toHaveLength(1);
    // Asked again (the relayer forgot it, or the requester did), before and after it is mined.
    const pooled = await broadcast([{ ...part, requestId: 'part-1-again' }]);
    expect(pooled.sent).toEqual([]);
    expect(pooled.refused[0]!.failure.message).toMatch(/the hold changed onchain: 7000000 capturable/);
    expect(await mined(sent.sent[0]!.hash)).toEqual(['PaymentCaptured']);
    const later = await broadcast([{ ...part, requestId: 'part-1-later' }]);
    expect(later.sent).toEqual([]);
    expect(await state(terms)).toEqual({ capturable: 7_000_000n, refundable: 3_000_000n });
    // The next part expects what the first left; a void returns the rest.
    const next = await broadcast([request('part-2', { action: 'capture', paymentInfo: toWire(terms), amount: '2500000', expect: { capturable: '7000000' } })]);
    expect(await mined(next.sent[0]!.hash)).toEqual(['PaymentCaptured']);
    const voided = await broadcast([request('void', { action: 'void', paymentInfo: toWire(terms), expect: { capturable: '4500000' } })]);
    expect(await mined(voided.sent[0]!.hash)).toEqual(['PaymentVoided']);
    expect(await state(terms)).toEqual({ capturable: 0n, refundable: 5_500_000n });
  });

  it('sends one call per hold in a batch: the second waits for the first', async () => {
    const { terms, authorize } = await newHold();
    await mined((await broadcast([authorize])).sent[0]!.hash);
    const a = request('same-batch-a', { action: 'capture', paymentInfo: toWire(terms), amount: '1000000', expect: { capturable: '10000000' } });
    const b = request('same-batch-b', { action: 'capture', paymentInfo: toWire(terms), amount: '1000000', expect: { capturable: '10000000' } });
    const outcome = await broadcast([a, b]);
    expect(outcome.sent.map((t) => t.requestId)).toEqual(['same-batch-a']);
    expect(outcome.refused.map((r) => r.requestId)).toEqual(['same-batch-b']);
  });

  it('refuses what the hold does not allow, and what is not the merchant’s, taking no account nonce', async () => {
    const { terms, authorize } = await newHold(2_000_000n);
    await mined((await broadcast([authorize])).sent[0]!.hash);
    const before = await merchantCount();
    const stranger = privateKeyToAccount(payerKey).address;
    const outcome = await broadcast([
      request('too-much', { action: 'capture', paymentInfo: toWire(terms), amount: '3000000' }),
      request('elsewhere', { action: 'capture', paymentInfo: { ...toWire(terms), receiver: stranger }, amount: '1' }),
      request('wrong-nonce', { ...(authorize.call as EscrowCall), nonce: `0x${'11'.repeat(32)}` }),
    ]);
    expect(outcome.sent).toEqual([]);
    expect(Object.fromEntries(outcome.refused.map((r) => [r.requestId, r.failure.message]))).toMatchObject({
      'too-much': expect.stringMatching(/would revert/),
      elsewhere: expect.stringMatching(/pays the merchant key that operates it/),
      'wrong-nonce': expect.stringMatching(/nonce must be its terms' hash/),
    });
    expect(await merchantCount()).toBe(before);
    expect(await state(terms)).toEqual({ capturable: 2_000_000n, refundable: 0n });
  });
});
