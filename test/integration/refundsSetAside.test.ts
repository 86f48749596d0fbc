// A refund whose transaction reverts onchain (issue 18, the probe's findings 3 and 4), on an isolated
// chain of this file's own with AUTHCAP_REFUND_VALIDITY_SECONDS=60 (default 300), so waiting for a
// signed attempt's window to close takes a minute, not five.
//
// How it reverts, deterministically: the chain's mining is stopped while the refund is prechecked,
// signed and sent; once its transaction waits in the pool, the token owner pauses the token with a
// higher max fee (anvil orders its pool by max fee), and one block mines both, the pause first. The
// refund passed every precheck and still reverted ("Pausable: paused").
//
// What must hold: the refund is `failed` only once its attempt's window closed (the signed call is
// public and could still land until then), and then keeps the reverted transaction's hash (evidence,
// and its gas); meanwhile it is pending with lastError, and it does not hold the authorization's next
// refund back: a second refund, asked once the cause is fixed, succeeds before the first is failed.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeFunctionData, type Address } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import type { ApiResult } from '../support/api.js';
import {
  REFUND_FIELDS,
  refundFieldsOf,
  awaitRefund,
  capturedIn,
  expectChainAgreesWithRefunds,
  expectMoneyMoved,
  expectRefundOnchain,
  expectRefundShape,
  feedFor,
  getAuthorizationIn,
  getRefundIn,
  idempotencyKey,
  listRefundsIn,
  mark,
  newPayer,
  pendingFrom,
  pooledTransaction,
  postRefund,
  refund,
  sendOwnerTransaction,
  startIsolatedWorld,
  tokens,
  usedLogs,
  withMiningStopped,
  type IsolatedWorld,
  type Refund,
} from '../support/refunds.js';
import { parseRefundId } from '../../domain/refunds.js';
import { refundNonce } from '../../activities/refund.js';

const VALIDITY_SECONDS = 60;

let world: IsolatedWorld;

beforeAll(async () => {
  world = await startIsolatedWorld('refunds-set-aside', { env: { AUTHCAP_REFUND_VALIDITY_SECONDS: String(VALIDITY_SECONDS) } });
}, 180_000);

afterAll(async () => {
  await world?.stop();
});

async function amounts(id: string) {
  const a = await getAuthorizationIn(world, id);
  return { state: a.state, amountCaptured: a.amountCaptured, amountRefunded: a.amountRefunded };
}

describe(`a refund whose transaction reverts onchain (isolated chain, AUTHCAP_REFUND_VALIDITY_SECONDS=${VALIDITY_SECONDS})`, () => {
  it('is pending with lastError while its window is open, and a second refund (the cause fixed) succeeds meanwhile; then it is failed with its reverted transaction as transactionHash, its nonce never used; the rest is refundable', async () => {
    const p = await newPayer(world);
    const start = await mark(world, p.address);
    const captured = await capturedIn(world, p, '10');
    const id = captured.id;
    const merchant = captured.authorization!.to as Address;

    // The refund sent while nothing is mined; the pause put ahead of it in its block.
    let firstAnswer!: Promise<ApiResult>;
    const { refundHash, pauseHash, firstId } = await withMiningStopped(world, async () => {
      firstAnswer = postRefund(world, id, { amount: '3', reason: 'reverted onchain' }, { idempotencyKey: idempotencyKey('reverts') });
      // The relayer's transaction in the pool (the refund names it once it is in a block).
      const sentHash = await pendingFrom(world, merchant);
      const sent = (await listRefundsIn(world, id)).find((x) => x.reason === 'reverted onchain')!;
      expect(sent).toMatchObject({ state: 'pending', failure: null });
      const tx = await pooledTransaction(world, sentHash);
      expect(tx.blockNumber, 'the refund waits in the pool').toBeNull();
      const pause = await sendOwnerTransaction(world, 'pause', [], {
        maxFeePerGas: tx.maxFeePerGas * 10n,
        maxPriorityFeePerGas: tx.maxPriorityFeePerGas * 10n,
      });
      await world.chain.testClient.mine({ blocks: 1 });
      return { refundHash: tx.hash, pauseHash: pause, firstId: sent.id };
    });
    const [pauseReceipt, refundReceipt] = await Promise.all(
      [pauseHash, refundHash].map((hash) => world.publicClient.waitForTransactionReceipt({ hash, timeout: 30_000 })),
    );
    expect(pauseReceipt!.status, 'the pause landed').toBe('success');
    expect(refundReceipt!.blockNumber, "the pause is in the refund's block").toBe(pauseReceipt!.blockNumber);
    expect(pauseReceipt!.transactionIndex, 'ahead of the refund').toBeLessThan(refundReceipt!.transactionIndex);
    expect(refundReceipt!.status, 'the refund reverted onchain').toBe('reverted');
    // It is the refund: the merchant key's transferWithAuthorization of 3 to the payer.
    const sentTx = await world.publicClient.getTransaction({ hash: refundHash });
    expect(sentTx.from.toLowerCase()).toBe(merchant.toLowerCase());
    const call = decodeFunctionData({ abi: tokenAbi, data: sentTx.input });
    expect(call.functionName).toBe('transferWithAuthorization');
    const [from, to, value] = call.args as unknown as [Address, Address, bigint];
    expect({ from: from.toLowerCase(), to: to.toLowerCase(), value }).toEqual({
      from: merchant.toLowerCase(),
      to: p.address.toLowerCase(),
      value: tokens('3'),
    });

    // Reverted, but its signed call stays valid until its window closes: pending, with why.
    const waiting = await vi.waitFor(
      async () => {
        const r = await getRefundIn(world, firstId);
        expect(r.lastError?.code, JSON.stringify(r)).toBe('token_policy_blocked');
        return r;
      },
      { timeout: 60_000, interval: 250 },
    );
    expectRefundShape(waiting, { id: firstId, authorizationId: id, amount: '3', state: 'pending', failure: null, transactionHash: refundHash });
    expect(waiting.lastError!.message).toMatch(/paused/);
    const answered = await firstAnswer;
    expect(answered.status, JSON.stringify(answered.body)).toBe(202);
    expect(answered.body).toMatchObject({ id: firstId, state: 'pending' });

    // The cause fixed; a second refund of the same authorization does not wait behind the first.
    await world.ownerWrite('unpause', []);
    const second = await refund(world, id, { amount: '2', reason: 'after the fix' });
    expectRefundShape(second, { authorizationId: id, amount: '2', reason: 'after the fix', state: 'succeeded', lastError: null });
    await expectRefundOnchain(world, second, p.address, merchant, tokens('2'));
    const firstMeanwhile = await getRefundIn(world, firstId);
    expect(firstMeanwhile, 'the first refund, when the second has succeeded').toMatchObject({
      state: 'pending',
      failure: null,
      transactionHash: refundHash,
      lastError: { code: 'token_policy_blocked' },
    });
    expect(await amounts(id)).toEqual({ state: 'captured', amountCaptured: '10', amountRefunded: '2' });

    // Once its window has closed with its nonce unused: failed, naming the reverted transaction.
    const failed = await awaitRefund(world, firstId, (VALIDITY_SECONDS + 90) * 1000);
    expect(refundFieldsOf(failed)).toEqual(REFUND_FIELDS);
    expect(failed).toMatchObject({
      id: firstId,
      authorizationId: id,
      amount: '3',
      reason: 'reverted onchain',
      state: 'failed',
      transactionHash: refundHash,
      lastError: null,
      succeededAt: null,
      failure: { code: 'token_policy_blocked' },
    });
    expect(failed.failure!.message).toMatch(/paused/);
    expect((await world.publicClient.getTransactionReceipt({ hash: failed.transactionHash! })).status).toBe('reverted');
    const place = parseRefundId(firstId)!;
    expect(await usedLogs(world, merchant, refundNonce(place.authorizationRunId, place.sequence)), 'the failed refund nonce, used onchain').toEqual([]);
    expect(await listRefundsIn(world, id)).toEqual([failed, second]);
    expect(await amounts(id)).toEqual({ state: 'captured', amountCaptured: '10', amountRefunded: '2' });

    // In the order it happened: the second refund's success is announced before the first's failure.
    const events = await feedFor(world, captured.orderId, (data) => data.some((e) => e.type === 'refund.failed'));
    const at = (type: string, refundId: string) => events.findIndex((e) => e.type === type && e.data.object.id === refundId);
    const secondSucceeded = at('refund.succeeded', second.id);
    const firstFailed = at('refund.failed', firstId);
    const types = events.map((e) => `${e.type}:${e.data.object.id}`).join(', ');
    expect(secondSucceeded, types).toBeGreaterThanOrEqual(0);
    expect(firstFailed, types).toBeGreaterThan(secondSucceeded);
    expect(events[firstFailed].data.object).toEqual(failed);

    // The failed refund holds nothing back: all that is left (8) goes back.
    const rest = await refund(world, id, {});
    expectRefundShape(rest, { amount: '8', state: 'succeeded' });
    await expectRefundOnchain(world, rest, p.address, merchant, tokens('8'));
    const all: Refund[] = await listRefundsIn(world, id);
    expect(all.map((r) => [r.amount, r.state])).toEqual([
      ['3', 'failed'],
      ['2', 'succeeded'],
      ['8', 'succeeded'],
    ]);
    await expectChainAgreesWithRefunds(world, start, all);
    await expectMoneyMoved(world, start, { payer: 0n, merchant: 0n });
    expect(await amounts(id)).toEqual({ state: 'captured', amountCaptured: '10', amountRefunded: '10' });
    expect(second.transactionHash).not.toBe(refundHash);
  }, 420_000);
});
