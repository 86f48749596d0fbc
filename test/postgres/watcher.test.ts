// The chain watcher on the production shape: one per network whichever worker runs it, moved by
// Temporal to the other worker within seconds when its host dies, its place in the chain kept in
// Temporal. The periodic per-authorization checks are slowed to 5 minutes here, so what an
// authorization learns of its nonce in this test it learns from the watcher.
import type { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, parseSignature, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { CHAIN_WATCHER_WORKFLOW_TYPE, chainWatcherWorkflowId } from '../../domain/chainWatcher.js';
import { parseResourceId } from '../../domain/ids.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { authorizationTypedData } from '../../domain/eip3009.js';
import { DEFAULT_TASK_QUEUE } from '../../runtime/temporal.js';
import { createStored, sign } from '../faults/drive.js';
import { operatorTemporal } from './world.js';
import { eventually, kill, startWorld, type World } from '../faults/harness.js';

const NETWORK = 'eip155:31337';

describe('the chain watcher: one per network, on whichever worker is alive', () => {
  let world: World;
  let connection: Connection;
  let temporal: Client;
  beforeAll(async () => {
    world = await startWorld({
      temporal: 'postgres',
      workers: 2,
      apis: 2,
      validitySeconds: 600,
      env: { AUTHCAP_WATCH: '1', AUTHCAP_RECONCILE_SECONDS: '300' },
    });
    ({ connection, temporal } = await operatorTemporal(world));
  }, 300_000);
  afterAll(async () => {
    await connection?.close();
    await world?.stop();
  });

  const watcher = () => temporal.workflow.getHandle(chainWatcherWorkflowId(DEFAULT_TASK_QUEUE, NETWORK));
  /** The pid of the worker whose attempt of the watcher's activity is running, and that attempt's number. */
  const runningOn = async () => {
    const pending = (await watcher().describe()).raw.pendingActivities?.[0];
    // PENDING_ACTIVITY_STATE_STARTED: a worker holds it (SCHEDULED: waiting for one).
    const started = pending?.state === 2;
    return { pid: started ? Number(/^(\d+)@/.exec(pending?.lastWorkerIdentity ?? '')?.[1]) : undefined, attempt: pending?.attempt ?? 0 };
  };
  const nudges = async (id: string) => {
    const history = await temporal.workflow.getHandle(parseResourceId(id)!.workflowId).fetchHistory();
    return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'nonceActivity').length;
  };
  const walletOf = (i: number) =>
    createWalletClient({ chain: world.publicClient.chain, transport: http(world.anvil.rpcUrl), account: privateKeyToAccount(world.payers[i]!.privateKey) });

  it('exactly one runs for the network, whichever worker started first', async () => {
    const running: string[] = [];
    for await (const w of temporal.workflow.list({ query: `WorkflowType = '${CHAIN_WATCHER_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'` }))
      running.push(w.workflowId);
    expect(running).toEqual([chainWatcherWorkflowId(DEFAULT_TASK_QUEUE, NETWORK)]);
    const on = await eventually(runningOn, (r) => r.pid !== undefined, 30_000);
    expect(world.workers.map((w) => w.child.pid)).toContain(on!.pid);
  });

  it("its host killed mid-scan: a payer's outside cancel and an outside settlement during the move are both seen, once", async () => {
    // A: stored; the payer will cancel it onchain from their own wallet.
    const canceledId = await createStored(world, 0);
    const toCancel = await world.client.authorizations.get(canceledId);
    // B: a pre-signed TransferWithAuthorization that the payer will settle onchain themselves.
    const p3 = world.payers[3]!;
    const probe = await world.client.authorizations.create({ orderId: `watch-domain-${Date.now()}`, payer: p3.address, amount: '0.01' });
    await world.client.authorizations.void(probe.id, { reason: 'only needed the domain' });
    const now = Math.floor(Date.now() / 1000);
    const authorization = {
      from: p3.address,
      to: world.merchant.address,
      value: '30000',
      validAfter: String(now - 60),
      validBefore: String(now + 600),
      nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}` as Hex,
    };
    const signature = sign(authorizationTypedData(probe.domain!, 'TransferWithAuthorization', authorization), p3.privateKey);
    const settled = await world.client.authorizations.create({
      orderId: `watch-settled-${Date.now()}`,
      primaryType: 'TransferWithAuthorization',
      authorization,
      signature,
    });

    const before = await eventually(runningOn, (r) => r.pid !== undefined, 30_000);
    const host = world.workers.findIndex((w) => w.child.pid === before!.pid);
    expect(host).toBeGreaterThanOrEqual(0);

    // The cancel is mined while the watcher scans; its host dies right after.
    const cancelSig = parseSignature(sign(toCancel.cancellationTypedData, world.payers[0]!.privateKey));
    const cancelHash = await walletOf(0).writeContract({
      address: world.tokenAddress,
      abi: tokenAbi,
      functionName: 'cancelAuthorization',
      chain: world.publicClient.chain,
      args: [toCancel.authorization!.from, toCancel.authorization!.nonce, Number(cancelSig.v), cancelSig.r, cancelSig.s],
    });
    await world.publicClient.waitForTransactionReceipt({ hash: cancelHash });
    const [deadWorker] = world.workers.splice(host, 1);
    await kill(deadWorker!);

    // During the move: the payer settles B themselves.
    const sig = parseSignature(signature);
    const settleHash = await walletOf(3).writeContract({
      address: world.tokenAddress,
      abi: tokenAbi,
      functionName: 'transferWithAuthorization',
      chain: world.publicClient.chain,
      args: [
        p3.address,
        authorization.to,
        30000n,
        BigInt(authorization.validAfter),
        BigInt(authorization.validBefore),
        authorization.nonce,
        Number(sig.v),
        sig.r,
        sig.s,
      ],
    });
    await world.publicClient.waitForTransactionReceipt({ hash: settleHash });

    // Both seen (the periodic checks are 5 minutes away: this is the watcher's doing), each once.
    const canceled = await eventually(
      () => world.client.authorizations.get(canceledId),
      (a) => a.state === 'canceled',
      90_000,
    );
    expect(canceled?.cancellation).toMatchObject({ by: 'onchain', transactionHash: cancelHash });
    const captured = await eventually(
      () => world.client.authorizations.get(settled.id),
      (a) => a.state === 'captured',
      90_000,
    );
    expect(captured?.capture).toMatchObject({ by: 'onchain', transactionHash: settleHash });
    expect(await nudges(canceledId)).toBe(1);
    expect(await nudges(settled.id)).toBe(1);

    // The watcher moved: a later attempt, on the surviving worker.
    const after = await eventually(runningOn, (r) => r.pid !== undefined && r.pid !== before!.pid, 60_000);
    expect(after!.pid).toBe(world.workers[0]!.child.pid);
    expect(after!.attempt).toBeGreaterThan(before!.attempt);

    // The host back: still one watcher, still running where it was.
    await world.startWorker();
    let running = 0;
    for await (const _ of temporal.workflow.list({ query: `WorkflowType = '${CHAIN_WATCHER_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'` })) running += 1;
    expect(running).toBe(1);
    expect((await runningOn()).pid).toBe(after!.pid);
  });

  it('a watcher that ended (terminated by an operator) runs again within a minute, started by a worker', async () => {
    const before = await watcher().describe();
    await watcher().terminate('an operator stops the watcher');
    const again = await eventually(
      () => watcher().describe(),
      (d) => d.status.name === 'RUNNING' && d.runId !== before.runId,
      80_000,
    );
    expect(again?.status.name).toBe('RUNNING');
    expect(again?.runId).not.toBe(before.runId);
  }, 90_000);
});
