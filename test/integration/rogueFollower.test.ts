// Issue 35, finding 3: the rogue follower. Captures and refunds are followed onchain by one
// `captureOnchain` activity on the worker's follow task queue (domain/taskQueues.ts). Anyone who can
// reach the Temporal frontend can poll that queue: a poller WITHOUT the codec key takes such a task
// and answers it at once with a sealed result copied from an earlier capture's history, so the
// activity never runs (nothing is sent) and the workflow hears "confirmed" with another payment's
// transaction. However the answer came, authcap must report a capture or a refund only when the
// chain shows it: its nonce used, its own transaction with its own log, the money moved.
//
// The rogue polls a worker's queue, so it would also take other files' tasks on the suite's queue:
// this file runs on an isolated chain with a worker, a task queue and an API of its own, and the rogue
// answers only its test's victims (it hands every other task back). The server matches a task to the
// poll that has waited longest, and a worker's polls stay open a minute: the rogue opens a poll a
// second from the test's start, and the captures (refunds) come once the worker's polls open then
// have expired (`ripe()`: the suite's server holds an empty poll 20 s, test/support/suiteLongPolls.ts). The rogue's polls carry an identity saying what they are,
// stop by themselves after a bounded lifetime, and are stopped in `finally` and again in afterAll.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import type { Hex } from 'viem';
import { followTaskQueue } from '../../domain/taskQueues.js';
import type { AuthorizationResource } from '../../domain/authorization.js';
import { connectTemporalWithoutKeys } from '../support/temporal.js';
import { sleep } from '../support/lifecycle.js';
import {
  call,
  capturedIn,
  expectMoneyMoved,
  getAuthorizationIn,
  mark,
  newPayer,
  postRefund,
  startIsolatedWorld,
  storedIn,
  tokens,
  type IsolatedWorld,
} from '../support/refunds.js';
import {
  copiedActivityResult,
  expectRefundBackedByChain,
  nonceUsed,
  settledRefund,
  startRogueFollower,
  tokenReceipt,
  type Payload,
  type RogueFollower,
} from '../support/copiedPayloads.js';

/** The activity that sends a capture (or a refund) through the relayer and follows it onchain. */
const FOLLOWER_ACTIVITY = 'captureOnchain';
/** However a test ends, its rogue poller stops by itself after this long. */
const ROGUE_LIFETIME_MS = 150_000;

let world: IsolatedWorld;
let keyless: Client;
const rogues: RogueFollower[] = [];

beforeAll(async () => {
  world = await startIsolatedWorld('rogue-follower');
  keyless = await connectTemporalWithoutKeys();
});
afterAll(async () => {
  // Belt and braces: every rogue is stopped in its test's finally already.
  await Promise.all(rogues.map((r) => r.stop()));
  await keyless?.connection.close();
  await world?.stop();
});

/**
 * A keyless poller on the isolated worker's follow queue, opening a poll a second from now on. It
 * answers follower tasks of the `targets` workflows with the result copied into `copied.result`
 * (filled in once there is one), and hands every other task back.
 */
function rogueOnFollowQueue(targets: Set<string>, copied: { result: Payload[] }): RogueFollower {
  const rogue = startRogueFollower(keyless, {
    taskQueue: followTaskQueue(world.chain.taskQueue),
    activityType: FOLLOWER_ACTIVITY,
    targets: (workflowId) => targets.has(workflowId) && copied.result.length > 0,
    result: () => copied.result,
    staggerMs: 1_000,
    maxLifetimeMs: ROGUE_LIFETIME_MS,
  });
  rogues.push(rogue);
  return rogue;
}

/** An earlier capture (made by the worker: the rogue answers no task of it): its follower's sealed result, and its transaction. */
async function earlierCapture() {
  const payerA = await newPayer(world, tokens('10'));
  const a = await capturedIn(world, payerA, '1');
  const result = await copiedActivityResult(keyless, `authorization-${a.orderId}`, FOLLOWER_ACTIVITY);
  return { a, result, hash: a.capture!.transactionHash as Hex };
}

/** The authorizations once none is `capturing` any more, or as they are when `withinMs` has passed. */
async function capturesEnded(resources: readonly AuthorizationResource[], withinMs: number): Promise<AuthorizationResource[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const now = await Promise.all(resources.map((r) => getAuthorizationIn(world, r.id)));
    if (now.every((r) => r.state !== 'capturing') || Date.now() > deadline) return now;
    await sleep(300);
  }
}

/** The refunds once none is `pending` any more, or as they are when `withinMs` has passed. */
async function refundsEnded(refunds: readonly { id: string }[], withinMs: number): Promise<any[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const now = await Promise.all(refunds.map((r) => settledRefund(world, r.id, 0)));
    if (now.every((r) => r.state !== 'pending') || Date.now() > deadline) return now;
    await sleep(300);
  }
}

describe('a keyless poller on the follow task queue answering with a copied follower result', () => {
  it('no capture is reported captured unless the chain shows it; the payer is charged exactly what the API says was captured', {
    timeout: 240_000,
  }, async () => {
    const targets = new Set<string>();
    const copied = { result: [] as Payload[] };
    // The rogue polls from the start: its polls must be older than the worker's when the captures come.
    const rogue = rogueOnFollowQueue(targets, copied);
    const finals: AuthorizationResource[] = [];
    const answers: { status: number; body: unknown }[] = [];
    let aHash: Hex;
    let payer: Awaited<ReturnType<typeof newPayer>>;
    let since: Awaited<ReturnType<typeof mark>>;
    try {
      const earlier = await earlierCapture();
      copied.result = earlier.result;
      aHash = earlier.hash;
      payer = await newPayer(world, tokens('100'));
      const stored: AuthorizationResource[] = [];
      for (const amount of ['1', '2', '3']) stored.push(await storedIn(world, payer, amount));
      for (const s of stored) targets.add(`authorization-${s.orderId}`);
      since = await mark(world, payer.address);
      await rogue.ripe();
      // The merchant captures three authorizations of one payer through the API while the rogue polls.
      for (const s of stored) answers.push(await call(world, 'POST', `/v1/authorizations/${s.id}/capture`));
      finals.push(...(await capturesEnded(stored, 20_000)));
    } finally {
      await rogue.stop();
    }
    // The attack took place: without it this test shows nothing.
    expect(rogue.answered.length, `precondition: ${rogue.describe()}`).toBeGreaterThan(0);

    // Each capture ends (the worker alone on the queue now); then the API's word is checked against the chain.
    finals.splice(0, finals.length, ...(await capturesEnded(finals, 60_000)));
    let charged = 0n;
    for (const [i, f] of finals.entries()) {
      const what = `authorization ${i + 1} (${f.amount}, API: ${f.state}${f.capture ? ` by ${f.capture.transactionHash}` : ''}; capture POST answered ${answers[i]?.status})`;
      if (f.state !== 'captured') continue;
      const nonce = f.authorization!.nonce;
      expect.soft(await nonceUsed(world, payer.address, nonce), `${what}: the nonce used onchain`).toBe(true);
      const hash = f.capture?.transactionHash as Hex | undefined;
      expect.soft(hash?.toLowerCase(), `${what}: captured with the earlier capture's transaction`).not.toBe(aHash.toLowerCase());
      const receipt = hash ? await tokenReceipt(world, hash) : undefined;
      expect.soft(receipt?.used ?? [], `${what}: AuthorizationUsed logs of its transaction`).toContainEqual({
        authorizer: payer.address.toLowerCase(),
        nonce: nonce.toLowerCase(),
      });
      charged += tokens(f.amountCaptured);
    }
    // The chain: the payer paid exactly what the API says was captured, to the merchant.
    await expectMoneyMoved(world, since, { payer: -charged, merchant: charged });
  });

  it('a refund is never reported succeeded without its transfer on the chain', { timeout: 240_000 }, async () => {
    const targets = new Set<string>();
    const copied = { result: [] as Payload[] };
    const rogue = rogueOnFollowQueue(targets, copied);
    const refunds: any[] = [];
    let aHash: Hex;
    let payer: Awaited<ReturnType<typeof newPayer>>;
    let since: Awaited<ReturnType<typeof mark>>;
    try {
      const earlier = await earlierCapture();
      copied.result = earlier.result;
      aHash = earlier.hash;
      payer = await newPayer(world, tokens('100'));
      const captured = await capturedIn(world, payer, '3');
      targets.add(`refunds-${captured.id.split('.').pop()}`);
      since = await mark(world, payer.address);
      await rogue.ripe();
      // Three refunds of 0.50 through the API while the rogue polls.
      for (let i = 0; i < 3; i += 1) {
        const answer = await postRefund(world, captured.id, { amount: '0.5', reason: `refund ${i + 1}` });
        expect(answer.status, JSON.stringify(answer.body)).toBeOneOf([201, 202]);
        refunds.push(answer.body);
      }
      refunds.splice(0, refunds.length, ...(await refundsEnded(refunds, 20_000)));
    } finally {
      await rogue.stop();
    }
    expect(rogue.answered.length, `precondition: ${rogue.describe()}`).toBeGreaterThan(0);

    let refunded = 0n;
    for (const [i, settled] of (await refundsEnded(refunds, 60_000)).entries()) {
      const what = `refund ${i + 1} (API: ${settled.state} by ${settled.transactionHash})`;
      await expectRefundBackedByChain(world, settled, payer.address, what, aHash);
      if (settled.state === 'succeeded') refunded += tokens(settled.amount);
    }
    // The chain: the payer received exactly what the API says was refunded.
    await expectMoneyMoved(world, since, { payer: refunded, merchant: -refunded });
  });
});
