// The relayer's broadcast activity on a real anvil, run the way Temporal runs a retried attempt:
// with the transactions the first attempt signed handed back as heartbeat details.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPublicClient, encodeFunctionData, http, type Hex } from 'viem';
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

beforeAll(async () => {
  anvil = await startAnvil({ port: await freePort(), blockTimeSeconds: 0 });
  const accounts = devAccounts(2);
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

function harmlessRequest(id: string): RelayRequest {
  // A zero transfer to itself: a real transaction from the merchant key that changes nothing.
  const data = encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [ctx.merchant, 0n] });
  return {
    requestId: id,
    replyTo: { workflowId: 'nobody', runId: 'none' },
    to: ctx.tokenAddress,
    data,
    gas: '100000',
    authorizer: ctx.merchant,
    nonce: `0x${'00'.repeat(31)}01` as Hex,
  };
}

describe('broadcastBatch, retried after its transaction was mined', () => {
  it('reports the mined transaction as sent instead of retrying "nonce too low" for ever', async () => {
    const relayer = createRelayerActivities(ctx);
    const env = new MockActivityEnvironment();
    const start = await relayer.relayerAccountNonce();
    const first: BroadcastOutcome = await env.run(relayer.broadcastBatch, {
      startNonce: start,
      items: [harmlessRequest('a'), harmlessRequest('b')],
      sentAt: Date.now(),
    });
    expect(first.sent.map((t) => t.accountNonce)).toEqual([start, start + 1]);
    const client = createPublicClient({ transport: http(anvil.rpcUrl) });
    // Mined (automine): the node now answers "nonce too low" for the same raw transactions.
    expect(await client.getTransactionCount({ address: ctx.merchant })).toBe(start + 2);

    // The retried attempt gets the signed transactions back from its heartbeat, as Temporal does.
    const retried = new MockActivityEnvironment({ heartbeatDetails: first.sent as InflightTransaction[] });
    const again: BroadcastOutcome = await retried.run(relayer.broadcastBatch, {
      startNonce: start,
      items: [harmlessRequest('a'), harmlessRequest('b')],
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
      items: [harmlessRequest('c')],
      sentAt: Date.now(),
    });
    const other = { ...signedOnly.sent[0]!, hash: `0x${'11'.repeat(32)}` as Hex };
    const retried = new MockActivityEnvironment({ heartbeatDetails: [other] });
    const outcome: BroadcastOutcome = await retried.run(relayer.broadcastBatch, { startNonce: start, items: [harmlessRequest('c')], sentAt: Date.now() });
    // Our transaction is not known under that hash: the request goes back to the queue, from the chain's nonce.
    expect(outcome.sent).toEqual([]);
    expect(outcome.retry).toEqual(['c']);
    expect(outcome.nextAccountNonce).toBe(start + 1);
  });
});
