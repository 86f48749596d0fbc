// The relayer's broadcast activity on a real anvil, run the way Temporal runs a retried attempt:
// with the transactions the first attempt signed handed back as heartbeat details. And what it
// refuses: it builds every transaction itself from a typed call, so raw calldata, a capture paying
// someone else or a refund no capture backs is answered with a refusal and takes no account nonce.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPublicClient, encodeFunctionData, http, keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { readTokenDomain } from '../../activities/tokenDomain.js';
import { refundNonce } from '../../activities/refundNonce.js';
import { cancelAuthorizationTypes } from '../../domain/eip3009.js';
import { createChainContext, type ChainContext } from '../../activities/chainContext.js';
import { createRelayerActivities } from '../../activities/relayer.js';
import { startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';
import { deployDevToken, devAccounts } from '../../devstack/token.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import type { BroadcastOutcome, InflightTransaction, RelayRequest } from '../../domain/relay.js';
import { defineChain } from 'viem';

let anvil: Anvil;
let ctx: ChainContext;
let payerKey: Hex;

beforeAll(async () => {
  anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0 });
  const accounts = devAccounts(2);
  payerKey = accounts.payers[0]!.privateKey;
  const chain = defineChain({
    id: anvil.chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  const tokenAddress = await deployDevToken({ rpcUrl: anvil.rpcUrl, chain, accounts });
  ctx = await createChainContext({
    rpcUrl: anvil.rpcUrl,
    tokenAddress,
    merchantPrivateKey: accounts.merchant.privateKey,
    validitySeconds: 900,
    confirmations: 1,
  });
});

afterAll(async () => {
  await anvil?.stop();
});

/** A payer's cancellation of a fresh nonce: a real transaction from the merchant key that moves nothing. */
async function harmlessRequest(id: string): Promise<RelayRequest> {
  const payer = privateKeyToAccount(payerKey);
  const nonce = keccak256(toHex(`harmless:${id}:${Math.random()}`));
  const domain = await readTokenDomain(ctx);
  const signature = await payer.signTypedData({
    domain: { ...domain, chainId: Number(domain.chainId) },
    types: cancelAuthorizationTypes,
    primaryType: 'CancelAuthorization',
    message: { authorizer: payer.address, nonce },
  });
  return { requestId: id, replyTo: { workflowId: 'nobody', runId: 'none' }, call: { kind: 'cancel', authorizer: payer.address, nonce, signature } };
}

/** What a first attempt heartbeats once it has signed: its transactions (and nothing refused or known yet). */
const signedBatch = (signed: InflightTransaction[]) => ({ signed, refused: [], known: [] });

const items: Record<string, RelayRequest> = {};
const harmless = async (id: string) => (items[id] ??= await harmlessRequest(id));

describe('broadcastBatch, retried after its transaction was mined', () => {
  it('reports the mined transaction as sent instead of retrying "nonce too low" for ever', async () => {
    const relayer = createRelayerActivities(ctx);
    const env = new MockActivityEnvironment();
    const start = await relayer.relayerAccountNonce();
    const first: BroadcastOutcome = await env.run(relayer.broadcastBatch, {
      startNonce: start,
      items: [await harmless('a'), await harmless('b')],
      sentAt: Date.now(),
    });
    expect(first.sent.map((t) => t.accountNonce)).toEqual([start, start + 1]);
    const client = createPublicClient({ transport: http(anvil.rpcUrl) });
    // Mined (automine): the node now answers "nonce too low" for the same raw transactions.
    expect(await client.getTransactionCount({ address: ctx.merchant })).toBe(start + 2);

    // The retried attempt gets the signed transactions back from its heartbeat, as Temporal does.
    const retried = new MockActivityEnvironment({ heartbeatDetails: signedBatch(first.sent) });
    const again: BroadcastOutcome = await retried.run(relayer.broadcastBatch, {
      startNonce: start,
      items: [await harmless('a'), await harmless('b')],
      sentAt: Date.now(),
    });
    expect(again.sent.map((t) => t.hash)).toEqual(first.sent.map((t) => t.hash));
    expect(again.refused).toEqual([]);
    expect(again.nextAccountNonce).toBe(start + 2);
    // And nothing new went out.
    expect(await client.getTransactionCount({ address: ctx.merchant })).toBe(start + 2);
  });

  it('re-signs from the chain count when another transaction took the nonce', async () => {
    const relayer = createRelayerActivities(ctx);
    const start = await relayer.relayerAccountNonce();
    // Sign at `start` but let something else use that nonce first.
    const signedOnly: BroadcastOutcome = await new MockActivityEnvironment().run(relayer.broadcastBatch, {
      startNonce: start,
      items: [await harmless('c')],
      sentAt: Date.now(),
    });
    const other = { ...signedOnly.sent[0]!, hash: `0x${'11'.repeat(32)}` as Hex };
    const retried = new MockActivityEnvironment({ heartbeatDetails: signedBatch([other]) });
    const outcome: BroadcastOutcome = await retried.run(relayer.broadcastBatch, { startNonce: start, items: [await harmless('c')], sentAt: Date.now() });
    // Our transaction is not known under that hash: the request goes back to the queue, from the chain's nonce.
    expect(outcome.sent).toEqual([]);
    expect(outcome.retry).toEqual(['c']);
    expect(outcome.nextAccountNonce).toBe(start + 1);
  });
});

describe('broadcastBatch refuses what it cannot check', () => {
  it('answers raw calldata, a capture paying another address and a refund no capture backs with relay_refused, sending nothing', async () => {
    const relayer = createRelayerActivities(ctx);
    const client = createPublicClient({ transport: http(anvil.rpcUrl) });
    const start = await relayer.relayerAccountNonce();
    const thief = '0x000000000000000000000000000000000000bEEF';
    // Raw calldata, as a forged request might carry it: no typed call for the relayer to build.
    const raw = {
      requestId: 'raw',
      replyTo: { workflowId: 'nobody', runId: 'none' },
      to: ctx.tokenAddress,
      data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [thief, 1n] }),
      gas: '100000',
      authorizer: ctx.merchant,
      nonce: `0x${'00'.repeat(31)}02` as Hex,
    };
    const authorization = {
      from: thief as Hex,
      to: thief as Hex,
      value: '1',
      validAfter: '0',
      validBefore: '99999999999',
      nonce: `0x${'00'.repeat(31)}03` as Hex,
    };
    const elsewhere: RelayRequest = {
      requestId: 'capture-elsewhere',
      replyTo: { workflowId: 'nobody', runId: 'none' },
      call: { kind: 'capture', primaryType: 'TransferWithAuthorization', authorization, signature: `0x${'11'.repeat(65)}` },
    };
    const unbacked: RelayRequest = {
      requestId: 'refund-unbacked',
      replyTo: { workflowId: 'nobody', runId: 'none' },
      call: {
        kind: 'refund',
        authorization: { ...authorization, from: ctx.merchant, nonce: refundNonce('run', 1) },
        signature: `0x${'11'.repeat(65)}`,
        refund: { authorizationRunId: 'run', sequence: 1, captureTransactionHash: `0x${'22'.repeat(32)}` },
      },
    };
    const wrongNonce: RelayRequest = {
      ...unbacked,
      requestId: 'refund-wrong-nonce',
      call: { ...(unbacked.call as Extract<RelayRequest['call'], { kind: 'refund' }>), authorization: { ...authorization, from: ctx.merchant } },
    };
    const cancel = await harmless('after-refusals');
    // A checked call, routed to this relayer's network by an activity header (not sealed) but sealed for another.
    const otherNetwork: RelayRequest = { ...(await harmless('other-network')), requestId: 'other-network', network: 'eip155:8453' };
    const outcome: BroadcastOutcome = await new MockActivityEnvironment().run(relayer.broadcastBatch, {
      startNonce: start,
      items: [raw as unknown as RelayRequest, elsewhere, unbacked, wrongNonce, otherNetwork, cancel],
      sentAt: Date.now(),
    });
    expect(outcome.refused.map((r) => [r.requestId, r.failure.code])).toEqual([
      ['raw', 'relay_refused'],
      ['capture-elsewhere', 'relay_refused'],
      ['refund-unbacked', 'relay_refused'],
      ['refund-wrong-nonce', 'relay_refused'],
      ['other-network', 'relay_refused'],
    ]);
    expect(outcome.refused[4]!.failure.message).toMatch(/for eip155:8453 is not sent on eip155:/);
    expect(outcome.refused[1]!.failure.message).toMatch(/must pay the merchant key/);
    expect(outcome.refused[2]!.failure.message).toMatch(/no capture/);
    expect(outcome.refused[3]!.failure.message).toMatch(/derived from its place/);
    // The one typed, checked call took the first free nonce: the refusals took none.
    expect(outcome.sent.map((t) => [t.requestId, t.accountNonce])).toEqual([['after-refusals', start]]);
    expect(await client.getTransactionCount({ address: ctx.merchant })).toBe(start + 1);
  });
});
