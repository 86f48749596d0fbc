// The relayer runs every call at the pending block before it signs (issue 35, findings 4 and 9): a
// call that would revert is answered instead of broadcast, and takes no account nonce. Its memory of
// what it answered lives on the chain, not only in its workflow: a capture asked again after the
// relayer lost its memory (terminated, reset) is answered with the transaction that made it, and an
// authorization consumed by anything else is answered nonce_already_used, never sent again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPublicClient, createWalletClient, defineChain, http, keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { readTokenDomain } from '../../activities/tokenDomain.js';
import { createChainContext, type ChainContext } from '../../activities/chainContext.js';
import { createRelayerActivities } from '../../activities/relayer.js';
import { startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';
import { deployDevToken, devAccounts } from '../../devstack/token.js';
import { authorizationTypes, cancelAuthorizationTypes } from '../../domain/eip3009.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import type { BroadcastOutcome, RelayRequest } from '../../domain/relay.js';

let anvil: Anvil;
let ctx: ChainContext;
let payerKey: Hex;
let rpcCalls: Map<string, number>;
const chainOf = (a: Anvil) =>
  defineChain({ id: a.chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [a.rpcUrl] } } });

beforeAll(async () => {
  anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0 });
  const accounts = devAccounts(2);
  payerKey = accounts.payers[0]!.privateKey;
  const tokenAddress = await deployDevToken({ rpcUrl: anvil.rpcUrl, chain: chainOf(anvil), accounts });
  ctx = await createChainContext({
    rpcUrl: anvil.rpcUrl,
    tokenAddress,
    merchantPrivateKey: accounts.merchant.privateKey,
    validitySeconds: 900,
    confirmations: 1,
  });
  rpcCalls = new Map();
  ctx.rpcMetrics.listeners.call = (method) => rpcCalls.set(method, (rpcCalls.get(method) ?? 0) + 1);
});

afterAll(async () => {
  await anvil?.stop();
});

const client = () => createPublicClient({ transport: http(anvil.rpcUrl) });
const merchantCount = () => client().getTransactionCount({ address: ctx.merchant, blockTag: 'pending' });
const replyTo = { workflowId: 'nobody', runId: 'none' };

/** A payer's ReceiveWithAuthorization to the merchant key, signed; `value` in minor units. */
async function capture(id: string, options: { value?: bigint; validBefore?: bigint; nonce?: Hex } = {}): Promise<RelayRequest> {
  const payer = privateKeyToAccount(payerKey);
  const domain = await readTokenDomain(ctx);
  const authorization = {
    from: payer.address,
    to: ctx.merchant,
    value: (options.value ?? 10_000n).toString(),
    validAfter: '0',
    validBefore: (options.validBefore ?? BigInt(Math.floor(Date.now() / 1000) + 3600)).toString(),
    nonce: options.nonce ?? keccak256(toHex(`simulation:${id}:${Math.random()}`)),
  };
  const signature = await payer.signTypedData({
    domain: { ...domain, chainId: Number(domain.chainId) },
    types: authorizationTypes,
    primaryType: 'ReceiveWithAuthorization',
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  });
  return { requestId: id, replyTo, replyOn: 'failure', call: { kind: 'capture', primaryType: 'ReceiveWithAuthorization', authorization, signature } };
}

async function cancel(id: string, nonce: Hex): Promise<RelayRequest> {
  const payer = privateKeyToAccount(payerKey);
  const domain = await readTokenDomain(ctx);
  const signature = await payer.signTypedData({
    domain: { ...domain, chainId: Number(domain.chainId) },
    types: cancelAuthorizationTypes,
    primaryType: 'CancelAuthorization',
    message: { authorizer: payer.address, nonce },
  });
  return { requestId: id, replyTo, call: { kind: 'cancel', authorizer: payer.address, nonce, signature } };
}

async function broadcast(items: RelayRequest[]): Promise<BroadcastOutcome> {
  const relayer = createRelayerActivities(ctx);
  const startNonce = await relayer.relayerAccountNonce();
  return new MockActivityEnvironment().run(relayer.broadcastBatch, { startNonce, items, sentAt: Date.now() });
}

describe('the relayer simulates before it signs', () => {
  it('sends a call that passes, and counts one eth_call for it', async () => {
    await readTokenDomain(ctx);
    const before = await merchantCount();
    rpcCalls.clear();
    const outcome = await broadcast([await capture('passes')]);
    expect(outcome.sent.map((t) => [t.requestId, t.accountNonce])).toEqual([['passes', before]]);
    expect(outcome.refused).toEqual([]);
    // The broadcast's own calls: the nonce, the fees, the raw transaction; the simulation adds one eth_call.
    expect(rpcCalls.get('eth_call')).toBe(1);
    expect(await merchantCount()).toBe(before + 1);
  });

  it('answers a call that would revert instead of broadcasting it; it takes no account nonce', async () => {
    const before = await merchantCount();
    const tooMuch = await capture('too-much', { value: 10n ** 30n });
    const expired = await capture('expired', { validBefore: 1n });
    const fine = await capture('after-refusals');
    const outcome = await broadcast([tooMuch, expired, fine]);
    expect(outcome.refused.map((r) => r.requestId)).toEqual(['too-much', 'expired']);
    for (const r of outcome.refused) expect(r.failure.message).toMatch(/the relayer sent nothing: at the pending block the capture would revert/);
    expect(outcome.refused[0]!.failure.message).toMatch(/exceeds balance|insufficient/i);
    expect(outcome.refused[1]!.failure.code).toBe('authorization_expired');
    // The one that passes took the first free nonce.
    expect(outcome.sent.map((t) => [t.requestId, t.accountNonce])).toEqual([['after-refusals', before]]);
    expect(await merchantCount()).toBe(before + 1);
  });

  it('answers a capture asked again after the relayer forgot it with the transaction that made it, and sends nothing', async () => {
    const request = await capture('first');
    const first = await broadcast([request]);
    expect(first.sent).toHaveLength(1);
    const before = await merchantCount();
    // The same request, and the same capture under another request id (a copied signal of an earlier attempt).
    const again = await broadcast([request, { ...request, requestId: 'another-attempt' }]);
    expect(again.sent).toEqual([]);
    expect(again.refused).toEqual([]);
    expect(again.known).toEqual([
      { requestId: 'first', transactionHash: first.sent[0]!.hash, accountNonce: first.sent[0]!.accountNonce },
      { requestId: 'another-attempt', transactionHash: first.sent[0]!.hash, accountNonce: first.sent[0]!.accountNonce },
    ]);
    expect(await merchantCount()).toBe(before);
  });

  it('answers nonce_already_used for an authorization consumed otherwise (here canceled by the payer), and never a success', async () => {
    const request = await capture('canceled-first');
    const { nonce } = (request.call as Extract<RelayRequest['call'], { kind: 'capture' }>).authorization;
    const payerCancel = await cancel('payer-cancel', nonce);
    // The payer sends its cancellation itself.
    const wallet = createWalletClient({ chain: chainOf(anvil), transport: http(anvil.rpcUrl), account: privateKeyToAccount(payerKey) });
    const call = payerCancel.call as Extract<RelayRequest['call'], { kind: 'cancel' }>;
    const hash = await wallet.writeContract({
      address: ctx.tokenAddress,
      abi: tokenAbi,
      functionName: 'cancelAuthorization',
      args: [call.authorizer, call.nonce, call.signature],
    });
    await client().waitForTransactionReceipt({ hash });
    const before = await merchantCount();
    const outcome = await broadcast([request, { ...payerCancel, requestId: 'cancel-again' }]);
    expect(outcome.sent).toEqual([]);
    expect(outcome.known ?? []).toEqual([]);
    expect(outcome.refused.map((r) => [r.requestId, r.failure.code])).toEqual([
      ['canceled-first', 'nonce_already_used'],
      // Canceled, but not by this merchant key: not its transaction to claim.
      ['cancel-again', 'nonce_already_used'],
    ]);
    expect(outcome.refused[0]!.failure.message).toContain(`already canceled onchain in ${hash}`);
    expect(await merchantCount()).toBe(before);
  });

  it('sends one of two requests of a batch for the same authorization', async () => {
    const request = await capture('twice-a');
    const before = await merchantCount();
    const outcome = await broadcast([request, { ...request, requestId: 'twice-b' }]);
    expect(outcome.sent.map((t) => t.requestId)).toEqual(['twice-a']);
    expect(outcome.refused.map((r) => [r.requestId, r.failure.code])).toEqual([['twice-b', 'nonce_already_used']]);
    expect(await merchantCount()).toBe(before + 1);
  });

  it('gives a retried attempt the answers of the first, not only its transactions', async () => {
    const relayer = createRelayerActivities(ctx);
    const startNonce = await relayer.relayerAccountNonce();
    const items = [await capture('retried-refused', { value: 10n ** 30n }), await capture('retried-sent')];
    const env = new MockActivityEnvironment();
    let details: unknown;
    env.on('heartbeat', (d: unknown) => {
      details = d;
    });
    const first: BroadcastOutcome = await env.run(relayer.broadcastBatch, { startNonce, items, sentAt: Date.now() });
    const retried: BroadcastOutcome = await new MockActivityEnvironment({ heartbeatDetails: details }).run(relayer.broadcastBatch, {
      startNonce,
      items,
      sentAt: Date.now(),
    });
    expect(retried.refused).toEqual(first.refused);
    expect(retried.sent.map((t) => t.hash)).toEqual(first.sent.map((t) => t.hash));
    expect(await merchantCount()).toBe(startNonce + 1);
  });
});
