// A held payment's escrow call followed to depth (activities/escrowOnchain.ts): the relayer sends it,
// and the hold's own event, not counted before, is its answer; a void met by the payer's reclaim is
// answered with the reclaim.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPublicClient, createTestClient, createWalletClient, defineChain, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { readTokenDomain } from '../../activities/tokenDomain.js';
import { createChainContext, type ChainContext } from '../../activities/chainContext.js';
import { createRelayerActivities } from '../../activities/relayer.js';
import { createEscrowOnchainActivity } from '../../activities/escrowOnchain.js';
import { createEscrowRefundFactsActivity } from '../../activities/escrowRefund.js';
import type { EscrowOnchainRequest, EscrowOnchainResult, EscrowRefundFacts } from '../../domain/holds.js';
import { startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';
import { deployDevToken, devAccounts } from '../../devstack/token.js';
import { deployDevEscrow } from '../../devstack/escrow.js';
import { authorizationTypes } from '../../domain/eip3009.js';
import { holdAuthorizationMessage, type EscrowAddresses, type PaymentInfo } from '../../domain/escrow.js';
import { escrowAbi } from '../../domain/escrowAbi.js';
import { fromWire, REFUNDS_ALLOWED, toWire, type EscrowCall } from '../../domain/escrowCall.js';
import { createDraftActivity } from '../../activities/draft.js';
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
  anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0.2 });
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
    pollingIntervalMs: 100,
  });
  ctx.escrow = escrow;
}, 60_000);
afterAll(async () => {
  await anvil?.stop();
});

const client = () => createPublicClient({ chain: chainOf(anvil), transport: http(anvil.rpcUrl) });

/** The relayer as the worker runs it, one batch per request. */
async function relay(request: RelayRequest): Promise<void> {
  const relayer = createRelayerActivities(ctx);
  const startNonce = await relayer.relayerAccountNonce();
  const outcome: BroadcastOutcome = await new MockActivityEnvironment().run(relayer.broadcastBatch, { startNonce, items: [request], sentAt: Date.now() });
  if (outcome.refused.length) throw new Error(outcome.refused[0]!.failure.message);
}
const follow = (request: EscrowOnchainRequest): Promise<EscrowOnchainResult> =>
  new MockActivityEnvironment().run(createEscrowOnchainActivity(ctx, relay), request);
const call = (action: EscrowCall['action'], terms: PaymentInfo, extra: Partial<EscrowCall> = {}): EscrowCall => ({
  kind: 'escrow',
  action,
  paymentInfo: toWire(terms),
  ...extra,
});

async function signedHold(captureWindowSeconds = 3_600) {
  const payer = privateKeyToAccount(payerKey);
  const now = Number((await client().getBlock()).timestamp);
  const terms = holdTerms(
    {
      operator: ctx.merchant,
      receiver: ctx.merchant,
      payer: payer.address,
      token: ctx.tokenAddress,
      amount: 10_000_000n,
      authorizeBy: now + 600,
      authorizationId: `f-${Math.random()}`,
    },
    { captureWindowSeconds, refundWindowSeconds: 86_400, voidMarginSeconds: 60 },
  );
  const message = holdAuthorizationMessage(terms, ctx.chainId, escrow);
  const domain = await readTokenDomain(ctx);
  const signature = await payer.signTypedData({
    domain: { ...domain, chainId: Number(domain.chainId) },
    types: authorizationTypes,
    primaryType: 'ReceiveWithAuthorization',
    message: { ...message, value: BigInt(message.value), validAfter: 0n, validBefore: BigInt(message.validBefore) },
  });
  return { terms, authorize: call('authorize', terms, { amount: '10000000', signature, nonce: message.nonce }) };
}

describe('an escrow call followed to depth', () => {
  it('answers each call with its own event: the authorize, each part, the void', async () => {
    const { terms, authorize } = await signedHold();
    const held = await follow({ requestId: 'a', replyTo, call: authorize, counted: [] });
    expect(held).toMatchObject({ event: 'PaymentAuthorized', amountMinor: '10000000', by: 'authcap' });
    const first = await follow({
      requestId: 'p1',
      replyTo,
      call: call('capture', terms, { amount: '3000000', expect: { capturable: '10000000' } }),
      counted: [],
    });
    expect(first).toMatchObject({ event: 'PaymentCaptured', amountMinor: '3000000', by: 'authcap' });
    // The next part does not take the first's event for its own.
    const second = await follow({
      requestId: 'p2',
      replyTo,
      call: call('capture', terms, { amount: '2500000', expect: { capturable: '7000000' } }),
      counted: [first.transactionHash],
      fromBlock: first.blockNumber,
    });
    expect(second).toMatchObject({ event: 'PaymentCaptured', amountMinor: '2500000' });
    expect(second.transactionHash).not.toBe(first.transactionHash);
    const voided = await follow({ requestId: 'v', replyTo, call: call('void', terms, { expect: { capturable: '4500000' } }), counted: [] });
    expect(voided).toMatchObject({ event: 'PaymentVoided', amountMinor: '4500000', by: 'authcap' });
  });

  it('answers a void that meets the payer’s reclaim with the reclaim: the same funds went back', async () => {
    const { terms, authorize } = await signedHold(1);
    await follow({ requestId: 'a2', replyTo, call: authorize, counted: [] });
    // Past the capture window the payer takes it back itself.
    await createTestClient({ mode: 'anvil', chain: chainOf(anvil), transport: http(anvil.rpcUrl) }).increaseTime({ seconds: 700 });
    const wallet = createWalletClient({ chain: chainOf(anvil), transport: http(anvil.rpcUrl), account: privateKeyToAccount(payerKey) });
    await createTestClient({ mode: 'anvil', chain: chainOf(anvil), transport: http(anvil.rpcUrl) }).setBalance({
      address: wallet.account.address,
      value: 10n ** 18n,
    });
    const hash = await wallet.writeContract({ address: escrow.escrow, abi: escrowAbi, functionName: 'reclaim', args: [terms] });
    const receipt = await client().waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    // The void was asked before the reclaim landed: the follower looks from a block before it.
    const fromBlock = (receipt.blockNumber - 1n).toString();
    // authcap's own void would now revert; what the follower finds is the reclaim.
    const released: EscrowOnchainResult = await new MockActivityEnvironment().run(
      createEscrowOnchainActivity(ctx, async () => undefined),
      {
        requestId: 'v2',
        replyTo,
        call: call('void', terms),
        counted: [],
        fromBlock,
      },
    );
    expect(released).toMatchObject({ event: 'PaymentReclaimed', amountMinor: '10000000', by: 'onchain', transactionHash: hash });
  });
});

describe('a refund through the escrow', () => {
  it('approves the refund collector once, then refunds exactly once what the escrow says is refundable, proved by PaymentRefunded', async () => {
    const { terms, authorize } = await signedHold();
    await follow({ requestId: 'r-a', replyTo, call: authorize, counted: [] });
    const part = await follow({
      requestId: 'r-p',
      replyTo,
      call: call('capture', terms, { amount: '6000000', expect: { capturable: '10000000' } }),
      counted: [],
    });
    const facts = (): Promise<EscrowRefundFacts> => new MockActivityEnvironment().run(createEscrowRefundFactsActivity(ctx), { paymentInfo: toWire(terms) });
    expect(await facts()).toMatchObject({ capturableMinor: '4000000', refundableMinor: '6000000', allowance: '0' });

    const allowed = await follow({ requestId: 'r-allow', replyTo, call: call('allowRefunds', terms), counted: [] });
    expect(allowed).toMatchObject({ event: 'Approval', by: 'authcap' });
    expect(BigInt((await facts()).allowance)).toBeGreaterThanOrEqual(REFUNDS_ALLOWED);
    // Allowed already: the relayer sends no second approval.
    await expect(relay({ requestId: 'r-allow-2', replyTo, sender: ctx.merchant, call: call('allowRefunds', terms), replyOn: 'failure' })).rejects.toThrow(
      /allowed already/,
    );

    const refund = call('refund', terms, { amount: '2000000', expect: { refundable: '6000000' } });
    const refunded = await follow({ requestId: 'r-1', replyTo, call: refund, counted: [part.transactionHash] });
    expect(refunded).toMatchObject({ event: 'PaymentRefunded', amountMinor: '2000000', by: 'authcap' });
    expect(await facts()).toMatchObject({ refundableMinor: '4000000' });
    // The same refund asked again (a lost answer, a replay): the escrow no longer says 6.00 refundable, so nothing is sent.
    await expect(relay({ requestId: 'r-1-again', replyTo, sender: ctx.merchant, call: refund, replyOn: 'failure' })).rejects.toThrow(/changed onchain/);
    // Looked for without sending: the landed refund is found by its event.
    const sent: RelayRequest[] = [];
    const found: EscrowOnchainResult = await new MockActivityEnvironment().run(
      createEscrowOnchainActivity(ctx, async (r) => void sent.push(r)),
      { requestId: 'r-1-found', replyTo, call: refund, counted: [part.transactionHash], fromBlock: part.blockNumber, followOnly: true },
    );
    expect(found.transactionHash).toBe(refunded.transactionHash);
    expect(sent).toEqual([]);
  });
});

describe('a hold’s draft', () => {
  it('is the collector’s ReceiveWithAuthorization of terms made for this authorization, which the escrow then takes', async () => {
    const payer = privateKeyToAccount(payerKey);
    // Drafted at the chain's time: the test before this one moved the chain's clock ahead of the wall's.
    const chainNow = Number((await client().getBlock()).timestamp);
    const draft = createDraftActivity(ctx, { now: () => chainNow });
    const drafted = await draft({
      payer: payer.address,
      value: '4000000',
      primaryType: 'ReceiveWithAuthorization',
      validForSeconds: 600,
      hold: { authorizationId: 'order-h' },
    });
    const terms = fromWire(drafted.hold!.terms);
    expect(terms).toMatchObject({ operator: ctx.merchant, receiver: ctx.merchant, payer: payer.address, token: ctx.tokenAddress, maxAmount: 4_000_000n });
    expect(drafted.authorization).toEqual(holdAuthorizationMessage(terms, ctx.chainId, escrow));
    expect(drafted.authorization).toMatchObject({ to: escrow.paymentCollector, validAfter: '0', value: '4000000' });
    // The same id drafts the same terms (the salt is the id's); the payer's signature of them is what the escrow takes.
    const again = await draft({
      payer: payer.address,
      value: '4000000',
      primaryType: 'ReceiveWithAuthorization',
      validForSeconds: 600,
      hold: { authorizationId: 'order-h' },
    });
    expect(again.hold!.terms.salt).toBe(drafted.hold!.terms.salt);
    const signature = await payer.signTypedData({
      domain: { ...drafted.domain, chainId: Number(drafted.domain.chainId) },
      types: authorizationTypes,
      primaryType: 'ReceiveWithAuthorization',
      message: { ...drafted.authorization, value: 4_000_000n, validAfter: 0n, validBefore: BigInt(drafted.authorization.validBefore) },
    });
    const held = await follow({
      requestId: 'draft-hold',
      replyTo,
      call: call('authorize', terms, { amount: '4000000', signature, nonce: drafted.authorization.nonce }),
      counted: [],
    });
    expect(held).toMatchObject({ event: 'PaymentAuthorized', amountMinor: '4000000' });
  });

  it('is refused with holds_not_available on a network with no escrow', async () => {
    const { escrow: _none, ...plain } = ctx;
    const draft = createDraftActivity(plain as ChainContext);
    await expect(draft({ payer: ctx.merchant, value: '1', primaryType: 'ReceiveWithAuthorization', hold: { authorizationId: 'x' } })).rejects.toMatchObject({
      code: 'holds_not_available',
    });
  });
});
