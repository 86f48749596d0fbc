// Regression tests for the durability defects found by reading the code (issue 8): each would have
// failed before its fix. They run on chains of their own (test/support/isolatedChain.ts) so they
// can inject node faults and pause mining without disturbing the other suites.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { cancelAuthorizationTypes } from '../../domain/eip3009.js';
import { AuthcapError } from '../../domain/errors.js';
import { relayerWorkflowId } from '../../domain/relay.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { AuthorizationStateAttribute, OrderIdAttribute, PayerAttribute } from '../../domain/searchAttributes.js';
import { walletSign } from '../support/api.js';
import { startIsolatedChain, type IsolatedChain } from '../support/isolatedChain.js';
import { connectTemporal } from '../support/temporal.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > until) return value;
    await sleep(200);
  }
}

async function storedOn(chain: IsolatedChain, payerIndex: number, amount = '1') {
  const payer = chain.payers[payerIndex]!;
  const drafted = await chain.client.authorizations.create({ orderId: `dur-${process.pid}-${Date.now()}-${payerIndex}`, payer: payer.address, amount });
  return chain.client.authorizations.sign(drafted.id, walletSign(drafted.typedData, payer.privateKey));
}

describe('a capture whose activity fails for good', () => {
  let chain: IsolatedChain;
  let refuseCalls = false;
  beforeAll(async () => {
    // The node answers "invalid params" to every eth_call while refuseCalls is on: a non-retryable failure.
    chain = await startIsolatedChain({
      proxy: { reject: (method) => (refuseCalls && method === 'eth_call' ? { code: -32602, message: 'invalid argument 0: bad call' } : undefined) },
    });
  }, 180_000);
  afterAll(() => chain?.stop());

  it('ends the command, leaves the authorization stored and at rest: a void then works', async () => {
    const stored = await storedOn(chain, 0);
    expect(stored.state).toBe('stored');
    refuseCalls = true;
    const failure = await chain.client.authorizations.capture(stored.id).then(
      () => undefined,
      (err: unknown) => err,
    );
    refuseCalls = false;
    expect(failure).toBeInstanceOf(AuthcapError);
    expect((failure as AuthcapError).code).toBe('chain_unavailable');
    const after = await chain.client.authorizations.get(stored.id);
    expect(after.state).toBe('stored');
    expect(after.lastError?.code).toBe('chain_unavailable');
    // Not busy: void is accepted and the workflow closes.
    const voided = await chain.client.authorizations.void(stored.id, { reason: 'order canceled after a failed capture' });
    expect(voided.state).toBe('voided');
  });
});

describe('the relayer and the capture path', () => {
  let chain: IsolatedChain;
  beforeAll(async () => {
    chain = await startIsolatedChain();
  }, 180_000);
  afterAll(() => chain?.stop());

  it('a relayer rolled over with requests still queued sends them in its next run', async () => {
    const temporal = await connectTemporal();
    const before = await chain.publicClient.getTransactionCount({ address: chain.merchant.address });
    // A payer's cancellation of a fresh nonce: a real merchant transaction that moves nothing.
    const payer = privateKeyToAccount(chain.payers[2]!.privateKey);
    const nonce = keccak256(toHex(`carried-${Date.now()}`));
    const [name, version] = await Promise.all([
      chain.publicClient.readContract({ address: chain.tokenAddress, abi: tokenAbi, functionName: 'name' }),
      chain.publicClient.readContract({ address: chain.tokenAddress, abi: tokenAbi, functionName: 'version' }),
    ]);
    const signature = await payer.signTypedData({
      domain: { name, version, chainId: await chain.publicClient.getChainId(), verifyingContract: chain.tokenAddress },
      types: cancelAuthorizationTypes,
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer.address, nonce },
    });
    // The state continue-as-new carries: one request not yet broadcast.
    await temporal.workflow.start('merchantRelayerWorkflow', {
      taskQueue: chain.taskQueue,
      workflowId: relayerWorkflowId(chain.merchant.address, chain.network),
      args: [
        {
          accountNonce: null,
          inflight: [],
          answered: [],
          queue: [
            {
              requestId: 'carried-1',
              replyTo: { workflowId: 'nobody', runId: '00000000-0000-4000-8000-000000000000' },
              call: { kind: 'cancel', authorizer: payer.address, nonce, signature },
            },
          ],
        },
      ],
    });
    const after = await eventually(
      () => chain.publicClient.getTransactionCount({ address: chain.merchant.address }),
      (n) => n > before,
    );
    expect(after).toBe(before + 1);
    await temporal.connection.close();
  });

  it('a capture that reverts onchain (payer blacklisted in the same block) can be retried and captures', { timeout: 180_000 }, async () => {
    const payer = chain.payers[1]!;
    const stored = await storedOn(chain, 1, '2');
    await chain.setMining(false);
    const pending = chain.client.authorizations.capture(stored.id, { waitMs: 120_000 }).then(
      (outcome) => ({ outcome }),
      (error: unknown) => ({ error }),
    );
    // Wait until the relayer's transaction is in the pool, then blacklist the payer ahead of it in the same block.
    const queued = await eventually(
      async () =>
        (await chain.publicClient.getTransactionCount({ address: chain.merchant.address, blockTag: 'pending' })) -
        (await chain.publicClient.getTransactionCount({ address: chain.merchant.address, blockTag: 'latest' })),
      (n) => n > 0,
      90_000,
    );
    if (queued !== 1) {
      const outcome = await Promise.race([pending, sleep(1_000).then(() => 'still waiting')]);
      expect.fail(`expected the capture in the pool, found ${queued}; the capture answered ${JSON.stringify(outcome)}`);
    }
    // Deterministic ordering: take our capture out of the pool, mine the blacklist, put ours back.
    const pool = (await chain.publicClient.request({ method: 'txpool_content' as never })) as { pending: Record<string, Record<string, { hash: Hex }>> };
    const ours = Object.entries(pool.pending).find(([from]) => from.toLowerCase() === chain.merchant.address.toLowerCase())![1];
    const captureHash = Object.values(ours)[0]!.hash;
    const raw = (await chain.publicClient.request({ method: 'eth_getRawTransactionByHash' as never, params: [captureHash] as never })) as Hex;
    await chain.publicClient.request({ method: 'anvil_dropTransaction' as never, params: [captureHash] as never });
    await chain.ownerWallet.writeContract({
      address: chain.tokenAddress,
      abi: tokenAbi,
      functionName: 'blacklist',
      args: [payer.address],
      account: chain.ownerWallet.account!,
      chain: undefined,
    });
    await chain.testClient.mine({ blocks: 1 });
    await chain.publicClient.request({ method: 'eth_sendRawTransaction' as never, params: [raw] as never });
    await chain.setMining(true);
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash: captureHash });
    expect(receipt.status).toBe('reverted');
    const first = await pending;
    expect('error' in first).toBe(true);
    const error = (first as { error: AuthcapError }).error;
    expect(error.code).toBe('token_policy_blocked');
    expect(error.message).toMatch(/blacklisted/i);
    const afterRevert = await chain.client.authorizations.get(stored.id);
    expect(afterRevert.state).toBe('stored');
    expect(afterRevert.lastError?.message.match(/0x[0-9a-f]{64}/g)?.length ?? 0).toBeLessThanOrEqual(1);

    await chain.ownerWallet.writeContract({
      address: chain.tokenAddress,
      abi: tokenAbi,
      functionName: 'unBlacklist',
      args: [payer.address],
      account: chain.ownerWallet.account!,
      chain: undefined,
    });
    await sleep(600);
    const retried = await chain.client.authorizations.capture(stored.id, { waitMs: 30_000 });
    expect(retried.settled).toBe(true);
    expect(retried.authorization.state).toBe('captured');
    expect(retried.authorization.capture?.by).toBe('authcap');
  });
});

describe('an authorization rolled over by continue-as-new', () => {
  it('keeps its id, its state and its history, and still captures', async () => {
    const chain = await startIsolatedChain();
    try {
      const payer = chain.payers[2]!;
      const temporal = await connectTemporal();
      const orderId = `rollover-${process.pid}-${Date.now()}`;
      // A tiny history limit and a 1 s tick make the workflow roll over within seconds.
      const handle = await temporal.workflow.start('authorizationWorkflow', {
        taskQueue: chain.taskQueue,
        workflowId: `authorization-${orderId}`,
        args: [
          {
            orderId,
            requestedAt: new Date().toISOString(),
            draft: { payer: payer.address, value: '1500000' },
            policyOverrides: { historyLimit: 30, reconcileIntervalSeconds: 1 },
          },
        ],
        typedSearchAttributes: [
          { key: OrderIdAttribute, value: orderId },
          { key: PayerAttribute, value: payer.address },
          { key: AuthorizationStateAttribute, value: 'drafting' },
        ],
      });
      const firstRunId = handle.firstExecutionRunId;
      const id = `auth_${Buffer.from(orderId).toString('base64url')}.${firstRunId}`;
      const drafted = await eventually(
        () => chain.client.authorizations.get(id).catch(() => undefined),
        (r) => r?.state === 'drafted',
      );
      const rolled = await eventually(
        () => temporal.workflow.getHandle(`authorization-${orderId}`).describe(),
        (d) => d.runId !== firstRunId,
        60_000,
      );
      expect(rolled.runId).not.toBe(firstRunId);
      expect(rolled.raw.workflowExecutionInfo?.firstRunId).toBe(firstRunId);
      // The same id still reads and commands the authorization, across runs.
      const read = await chain.client.authorizations.get(id);
      expect(read.state).toBe('drafted');
      expect(read.authorization).toEqual(drafted!.authorization);
      const stored = await chain.client.authorizations.sign(id, walletSign(read.typedData, payer.privateKey));
      expect(stored.state).toBe('stored');
      const captured = await chain.client.authorizations.capture(id, { waitMs: 30_000 });
      expect(captured.authorization.state).toBe('captured');
      expect(captured.authorization.history.map((h) => h.state)).toEqual(['drafting', 'drafted', 'stored', 'capturing', 'captured']);
      const listed = await chain.client.authorizations.list({ orderId });
      expect(listed.data.map((s) => s.id)).toEqual([id]);
      await temporal.connection.close();
    } finally {
      await chain.stop();
    }
  }, 180_000);
});
