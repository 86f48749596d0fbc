// The chain is the ledger of an authorization's refunds (issue 35): a refunds workflow rewound by a
// Temporal reset forgets refunds that landed, but the token does not. On a real anvil with the real
// compiled token, refunds landed under the nonces of their places (as an earlier, forgotten ledger
// would have sent them) bound what the merchant key signs next: prepareRefund refuses before it signs,
// the relayer refuses before it sends, and a place whose nonce already moved another amount is not
// reported as this refund's success.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPublicClient, createTestClient, http, keccak256, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createChainContext, type ChainContext } from '../../activities/chainContext.js';
import { createRefundActivities } from '../../activities/refund.js';
import { refundNonce } from '../../activities/refundNonce.js';
import { createRelayerActivities } from '../../activities/relayer.js';
import { refundBackingCheck } from '../../activities/relayCalls.js';
import { landedRefunds } from '../../activities/refundsOnchain.js';
import { LogReader } from '../../activities/rpc/logReader.js';
import { captureCall } from '../../activities/tokenCalls.js';
import { readTokenDomain } from '../../activities/tokenDomain.js';
import type { Anvil } from '../../devstack/anvil.js';
import type { CaptureRequest, RefundAttempt, RefundAttemptRequest } from '../../domain/activityContract.js';
import { authorizationMessageValues, authorizationTypes, type AuthorizationMessage } from '../../domain/eip3009.js';
import type { BroadcastOutcome, RelayRequest } from '../../domain/relay.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { openRefund, stepRefund } from '../../workflows/refundMachine.js';
import { startRpcProxy } from './support/rpcProxy.js';
import { startTokenChain } from './support/chain.js';

let anvil: Anvil;
let ctx: ChainContext;
let payerKey: Hex;
let payer: Address;
let merchantKey: Hex;
let rpcCalls: Map<string, number>;

beforeAll(async () => {
  const test = await startTokenChain();
  ({ anvil, ctx } = test);
  payerKey = test.accounts.payers[0]!.privateKey;
  payer = test.accounts.payers[0]!.address;
  merchantKey = test.accounts.merchant.privateKey;
  rpcCalls = new Map();
  ctx.rpcMetrics.listeners.call = (method) => rpcCalls.set(method, (rpcCalls.get(method) ?? 0) + 1);
  // A float the merchant key holds beyond every capture below: no refund here is refused for its balance.
  await capture(50_000_000n);
});

afterAll(async () => {
  await anvil?.stop();
});

const client = () => createPublicClient({ transport: http(anvil.rpcUrl) });
const merchantCount = () => client().getTransactionCount({ address: ctx.merchant, blockTag: 'pending' });
const balanceOf = (address: Address) => client().readContract({ address: ctx.tokenAddress, abi: tokenAbi, functionName: 'balanceOf', args: [address] });
const nonceUsed = (nonce: Hex) =>
  client().readContract({ address: ctx.tokenAddress, abi: tokenAbi, functionName: 'authorizationState', args: [ctx.merchant, nonce] });
const mined = async (hash: Hex) => {
  const receipt = await client().waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return receipt;
};

/** A payer's capture of `value` minor units to the merchant key, mined: its transaction hash. */
async function capture(value: bigint): Promise<Hex> {
  const account = privateKeyToAccount(payerKey);
  const domain = await readTokenDomain(ctx);
  const message = {
    from: account.address,
    to: ctx.merchant,
    value,
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
    nonce: keccak256(toHex(`capture:${Math.random()}`)),
  };
  const signature = await account.signTypedData({
    domain: { ...domain, chainId: Number(domain.chainId) },
    types: authorizationTypes,
    primaryType: 'ReceiveWithAuthorization',
    message,
  });
  const hash = await ctx.walletClient.writeContract({
    address: ctx.tokenAddress,
    abi: tokenAbi,
    functionName: 'receiveWithAuthorization',
    args: [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, signature],
  });
  await mined(hash);
  return hash;
}

/** The merchant key's refund at a place, signed directly: what an earlier (since forgotten) ledger sent. */
async function signedRefund(run: string, sequence: number, value: bigint, to: Address = payer) {
  const domain = await readTokenDomain(ctx);
  const authorization: AuthorizationMessage = {
    from: ctx.merchant,
    to,
    value: value.toString(),
    validAfter: '0',
    validBefore: String(Math.floor(Date.now() / 1000) + 3600),
    nonce: refundNonce(run, sequence),
  };
  const signature = await ctx.accountFor(ctx.merchant).signTypedData({
    domain: { ...domain, chainId: Number(domain.chainId) },
    types: { TransferWithAuthorization: authorizationTypes.TransferWithAuthorization },
    primaryType: 'TransferWithAuthorization',
    message: authorizationMessageValues(authorization),
  });
  return { primaryType: 'TransferWithAuthorization' as const, authorization, signature };
}

/** Sends a signed refund (as the relayer would) and waits for it. */
async function land(request: CaptureRequest): Promise<Hex> {
  const hash = await ctx.walletClient.writeContract(captureCall(request, ctx.tokenAddress));
  await mined(hash);
  return hash;
}

const refundRequest = (run: string, sequence: number, amount: bigint, captureTransactionHash: Hex, to: Address = payer): RefundAttemptRequest => ({
  merchant: ctx.merchant,
  payer: to,
  amountMinor: amount.toString(),
  authorizationRunId: run,
  sequence,
  captureTransactionHash,
});

const prepare = (request: RefundAttemptRequest): Promise<RefundAttempt> =>
  new MockActivityEnvironment().run(createRefundActivities(ctx).prepareRefund, request);

const run = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;

describe('refunds bounded by the chain, not by the ledger', () => {
  it('two refunds within the capture both sign and land (3.00 + 2.00 on 5.00); payer and merchant end where they started', async () => {
    const r = run('happy');
    const captured = await capture(5_000_000n);
    const payerBefore = await balanceOf(payer);
    const first = await prepare(refundRequest(r, 1, 3_000_000n, captured));
    expect(first.simulationFailure).toBeNull();
    expect(first.prepared).not.toBeNull();
    await land(first.prepared!.request);
    // The second brings the sum to exactly the capture: allowed.
    const second = await prepare(refundRequest(r, 2, 2_000_000n, captured));
    expect(second.simulationFailure).toBeNull();
    expect(second.prepared?.request.authorization.value).toBe('2000000');
    await land(second.prepared!.request);
    expect((await balanceOf(payer)) - payerBefore).toBe(5_000_000n);
  });

  it('landed refunds seq 1 + 2 summing to the capture: a seq 3 of 0.000001 is refused before signing, and by the relayer before sending', async () => {
    const r = run('full');
    const captured = await capture(5_000_000n);
    await land(await signedRefund(r, 1, 2_000_000n));
    await land(await signedRefund(r, 2, 3_000_000n));
    const sent = await merchantCount();

    const attempt = await prepare(refundRequest(r, 3, 1n, captured));
    expect(attempt.prepared).toBeNull();
    expect(attempt.simulationFailure?.code).toBe('relay_refused');
    expect(attempt.simulationFailure?.message).toMatch(/already moved 5000000 onchain \(1: 2000000 in 0x[0-9a-f]{64}, 2: 3000000 in 0x[0-9a-f]{64}\)/);
    // The machine fails it with that reason: nothing was signed, nothing can land.
    const record = stepRefund(openRefund({ ...recordFields(r, 3, 1n, captured) }), { type: 'PRECHECKED', at: new Date().toISOString(), attempt });
    expect(record.stage).toBe('failed');
    expect(record.failure?.code).toBe('relay_refused');

    // A seq 3 signed anyway (a forged request to the relayer) is refused and takes no account nonce.
    const relayer = createRelayerActivities(ctx);
    const forged = await signedRefund(r, 3, 1n);
    const outcome: BroadcastOutcome = await new MockActivityEnvironment().run(relayer.broadcastBatch, {
      startNonce: await relayer.relayerAccountNonce(),
      items: [refundRelayRequest('seq3', r, 3, captured, forged)],
      sentAt: Date.now(),
    });
    expect(outcome.sent).toEqual([]);
    expect(outcome.refused.map((x) => x.failure.code)).toEqual(['relay_refused']);
    expect(outcome.refused[0]!.failure.message).toMatch(/would give back more than the capture moved \(5000000\)/);
    expect(await merchantCount()).toBe(sent);
    expect(await nonceUsed(refundNonce(r, 3))).toBe(false);
  });

  it('the reset of the issue: seq 1 failed, seq 2 of 5.00 landed, the rewound ledger asks 5.00 again at seq 1: refused, 5.00 refunded in all', async () => {
    const r = run('reset');
    const captured = await capture(5_000_000n);
    await land(await signedRefund(r, 2, 5_000_000n));
    const payerBefore = await balanceOf(payer);
    const attempt = await prepare(refundRequest(r, 1, 5_000_000n, captured));
    expect(attempt.facts.onchain.status).toBe('unused');
    expect(attempt.prepared).toBeNull();
    expect(attempt.simulationFailure?.code).toBe('relay_refused');
    expect(await nonceUsed(refundNonce(r, 1))).toBe(false);
    expect(await balanceOf(payer)).toBe(payerBefore);
  });

  it("a partial capture's release (seq 0) counts too: 10.00 captured, 4.00 released, a refund of 6.00 signs and one of 6.000001 does not", async () => {
    const r = run('release');
    const captured = await capture(10_000_000n);
    await land(await signedRefund(r, 0, 4_000_000n));
    expect((await prepare(refundRequest(r, 1, 6_000_001n, captured))).simulationFailure?.code).toBe('relay_refused');
    const fits = await prepare(refundRequest(r, 1, 6_000_000n, captured));
    expect(fits.simulationFailure).toBeNull();
    expect(fits.prepared).not.toBeNull();
  });

  it('seq 1 landed 1.00; a refund asking 5.00 at seq 1 is not reported succeeded: refund_sequence_taken; one asking 1.00 follows the landed log', async () => {
    const r = run('taken');
    const captured = await capture(5_000_000n);
    const landedHash = await land(await signedRefund(r, 1, 1_000_000n));
    const sent = await merchantCount();

    const other = await prepare(refundRequest(r, 1, 5_000_000n, captured));
    expect(other.facts.onchain).toMatchObject({ status: 'used', transactionHash: landedHash });
    expect(other.prepared).toBeNull();
    expect(other.simulationFailure?.code).toBe('refund_sequence_taken');
    expect(other.simulationFailure?.message).toContain(`already moved 1000000 to ${payer} in ${landedHash}`);
    // The machine ends it failed at once, even after an attempt of its own was signed: none can land.
    const at = new Date().toISOString();
    const fresh = stepRefund(openRefund(recordFields(r, 1, 5_000_000n, captured)), { type: 'PRECHECKED', at, attempt: other });
    expect(fresh.stage).toBe('failed');
    expect(fresh.failure?.code).toBe('refund_sequence_taken');
    expect(fresh.transactionHash).toBeNull();
    const signedBefore = { ...openRefund(recordFields(r, 1, 5_000_000n, captured)), attempts: 1, validBefore: '9999999999' };
    const again = stepRefund(signedBefore, { type: 'PRECHECKED', at, attempt: other });
    expect(again.stage).toBe('failed');
    expect(again.failure?.code).toBe('refund_sequence_taken');

    // The same amount to another address is not this refund either.
    const elsewhere = await prepare(refundRequest(r, 1, 1_000_000n, captured, '0x000000000000000000000000000000000000bEEF'));
    expect(elsewhere.simulationFailure?.code).toBe('refund_sequence_taken');

    // The refund that did land (a retry after a crash) still follows its log to success.
    const own = await prepare(refundRequest(r, 1, 1_000_000n, captured));
    expect(own.simulationFailure).toBeNull();
    expect(own.facts.onchain).toMatchObject({ status: 'used', transactionHash: landedHash });
    expect(stepRefund(openRefund(recordFields(r, 1, 1_000_000n, captured)), { type: 'PRECHECKED', at, attempt: own }).stage).toBe('submitted');
    expect(await merchantCount()).toBe(sent);
  });

  it('the landed refunds read off the chain: amounts, recipients and transactions; the refund asked about is left out', async () => {
    const r = run('read');
    const captured = await capture(3_000_000n);
    const fromBlock = (await client().getTransactionReceipt({ hash: captured })).blockNumber;
    const h1 = await land(await signedRefund(r, 1, 1_000_000n));
    const h4 = await land(await signedRefund(r, 4, 250_000n));
    // Paid to someone other than the payer: its amount still counts, read from its receipt.
    const stranger = '0x000000000000000000000000000000000000bEEF';
    const h7 = await land(await signedRefund(r, 7, 5n, stranger));
    const landed = await landedRefunds(ctx, { merchant: ctx.merchant, payer, authorizationRunId: r, fromBlock });
    expect(landed).toEqual([
      { sequence: 1, transactionHash: h1, to: payer, value: 1_000_000n },
      { sequence: 4, transactionHash: h4, to: payer, value: 250_000n },
      { sequence: 7, transactionHash: h7, to: stranger, value: 5n },
    ]);
    const without4 = await landedRefunds(ctx, { merchant: ctx.merchant, payer, authorizationRunId: r, fromBlock, except: 4 });
    expect(without4.map((x) => x.sequence)).toEqual([1, 7]);
  });
});

describe('what the check costs, and a node that does not answer', () => {
  it('one multicall when no other refund landed; one multicall and one log read (a span and the pending view) when some did', async () => {
    const r = run('cost');
    const captured = await capture(5_000_000n);
    const check = refundBackingCheck(ctx);
    const refunds = [await signedRefund(r, 1, 1_000_000n), await signedRefund(r, 2, 1_000_000n)];
    const ask = (sequence: 1 | 2) =>
      check.check(ctx.merchant, {
        authorization: refunds[sequence - 1]!.authorization,
        refund: { authorizationRunId: r, sequence, captureTransactionHash: captured },
      });
    // The capture's receipt is read once and kept: read it first, so what follows is the check alone.
    expect(await ask(1)).toBeUndefined();
    rpcCalls.clear();
    expect(await ask(1)).toBeUndefined();
    expect(Object.fromEntries(rpcCalls)).toEqual({ eth_call: 1 });

    await land(refunds[0]!);
    rpcCalls.clear();
    expect(await ask(2)).toBeUndefined();
    // eth_getBlockByNumber: the log reader resolves `latest` to split the range from the capture's block.
    expect(Object.fromEntries(rpcCalls)).toEqual({ eth_call: 1, eth_getLogs: 2, eth_getBlockByNumber: 1 });

    // The log read spans the capture's block to the head in spans (under 2,000 blocks; 10 here): 25
    // blocks later, the same check reads three spans (and the pending view). Its cost grows with the
    // time since the capture, and only once some other refund of the authorization has landed.
    await createTestClient({ mode: 'anvil', transport: http(anvil.rpcUrl) }).mine({ blocks: 25 });
    const narrow = refundBackingCheck({ ...ctx, logs: new LogReader(ctx.publicClient, { maxSpanBlocks: 10n }) });
    const refund2 = { authorization: refunds[1]!.authorization, refund: { authorizationRunId: r, sequence: 2, captureTransactionHash: captured } };
    expect(await narrow.check(ctx.merchant, refund2)).toBeUndefined();
    rpcCalls.clear();
    expect(await narrow.check(ctx.merchant, refund2)).toBeUndefined();
    expect(Object.fromEntries(rpcCalls)).toEqual({ eth_call: 1, eth_getLogs: 4, eth_getBlockByNumber: 1 });
  });

  it('a node error in the multicall or the log read fails the check (retried), never refuses the refund', async () => {
    const r = run('faults');
    const captured = await capture(5_000_000n);
    await land(await signedRefund(r, 1, 1_000_000n));
    let failing: string | undefined;
    const proxy = await startRpcProxy(anvil.rpcUrl, {
      reject: (method) => (method === failing ? { code: -32603, message: 'injected: header not found' } : undefined),
    });
    try {
      const proxied = await createChainContext({
        rpcUrl: proxy.url,
        tokenAddress: ctx.tokenAddress,
        merchantPrivateKey: merchantKey,
        validitySeconds: 900,
        confirmations: 1,
      });
      const check = refundBackingCheck(proxied);
      const refund = {
        authorization: (await signedRefund(r, 2, 1_000_000n)).authorization,
        refund: { authorizationRunId: r, sequence: 2, captureTransactionHash: captured },
      };
      for (const method of ['eth_call', 'eth_getLogs']) {
        failing = method;
        await expect(check.check(ctx.merchant, refund), method).rejects.toThrow(/header not found|RPC|internal/i);
      }
      failing = undefined;
      expect(await check.check(ctx.merchant, refund)).toBeUndefined();
      // And a refund the landed one leaves no room for, once the node answers: refused.
      expect(await check.check(ctx.merchant, { ...refund, authorization: { ...refund.authorization, value: '4000001' } })).toMatch(
        /more than the capture moved/,
      );
    } finally {
      await proxy.close();
    }
  });
});

function recordFields(r: string, sequence: number, amount: bigint, captureTransactionHash: Hex) {
  return {
    sequence,
    authorizationRunId: r,
    orderId: `order-${r}`,
    payer,
    merchant: ctx.merchant,
    captureTransactionHash,
    amountMinor: amount.toString(),
    reason: null,
    createdAt: new Date().toISOString(),
    requestKey: null,
    requestFingerprint: null,
  };
}

function refundRelayRequest(
  id: string,
  r: string,
  sequence: number,
  captureTransactionHash: Hex,
  signed: Awaited<ReturnType<typeof signedRefund>>,
): RelayRequest {
  return {
    requestId: id,
    replyTo: { workflowId: 'nobody', runId: 'none' },
    call: {
      kind: 'refund',
      authorization: signed.authorization,
      signature: signed.signature,
      refund: { authorizationRunId: r, sequence, captureTransactionHash },
    },
  };
}
