// Holds (docs/holds.md) through the faults the suite throws at captures, driven through the HTTP API as
// an order service drives them (every POST retried with its Idempotency-Key after no answer, a 5xx, a
// 429 or a 409 idempotency_key_in_use; a 202 followed with GET, or asked again under its key):
//   1. the worker SIGKILLed between a hold's `authorize` going out and its confirmation;
//   2. the node failing while a part is in flight: eth_sendRawTransaction's answer lost after the node
//      took it; no read answered (logs, head, blocks, receipts: 503) for 6 s from just after the node
//      took the part's transaction, and the same for a hold's authorize; a share of every call dropped;
//   3. the worker SIGKILLed with several parts of several holds in flight, each part asked again with
//      its key after the restart;
//   4. a reorg of the `authorize`'s block before its depth, and of a part's;
//   5. a capture the escrow reverts (the token paused; the merchant, which receives, blacklisted).
// One world for the file (a Temporal dev server, anvil with the escrow, one worker, one API): the
// cases run in order and the audit (holdAudit.ts) checks every hold the file made against the chain.
//
// Outcome checks inside a case are soft where a later step can still say more (expect.soft), so a case
// goes on to leave its holds settled for the audit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { escrowAbi } from '../../domain/escrowAbi.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { apiCall, getUntil, postAsMerchant, sign, type ApiAnswer } from './drive.js';
import { kill, sleep, type World } from './harness.js';
import { auditHolds, readHold, startHoldWorld, units, type HoldResource, type HoldWorld } from './holdAudit.js';

/** Blocks to depth: 8 × 0.2 s, time for a kill or a reorg between an event and its confirmation. */
const CONFIRMATIONS = 8;
const ENV = { AUTHCAP_CONFIRMATIONS: String(CONFIRMATIONS), AUTHCAP_LOG_LEVEL: 'info' };
/** How long an order service follows one step before the case gives up on it. */
const FOLLOW_MS = 120_000;
/** A part on a healthy node lands in seconds: the node-fault case gives each one this long. */
const PART_MS = 30_000;
/** What a follower reads the chain with: the node-fault case's outage answers none of them. */
const READS = ['eth_getLogs', 'eth_blockNumber', 'eth_getBlockByNumber', 'eth_getTransactionReceipt'];

let hw: HoldWorld;
let world: World;
/** Every hold the file made, and its payer: what the audit reads. */
const ids: string[] = [];
const payerOf = new Map<string, Address>();

beforeAll(async () => {
  hw = await startHoldWorld({ env: ENV });
  world = hw.world;
}, 240_000);
afterAll(() => hw?.stop());

// ---- An order service's steps ----

let orders = 0;

type Draft = HoldResource & { typedData: unknown };

async function draftHold(payerIndex: number, amount: string): Promise<Draft> {
  const payer = world.payers[payerIndex % world.payers.length]!;
  orders += 1;
  const orderId = `hold-fault-${process.pid}-${Date.now()}-${orders}`;
  const created = await postAsMerchant<Draft>(world, '/v1/authorizations', { orderId, payer: payer.address, amount, hold: true }, `create-${orderId}`, {
    budgetMs: 60_000,
  });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
  expect(created.body.hold?.paymentInfoHash).toMatch(/^0x[0-9a-f]{64}$/);
  ids.push(created.body.id);
  payerOf.set(created.body.id, payer.address);
  return created.body;
}

/** The payer's signature, sent once (its answer waits for the hold): resolves with the answer, or undefined. */
function signHold(draft: Draft): Promise<ApiAnswer<HoldResource> | undefined> {
  const payer = payerOf.get(draft.id)!;
  const key = world.payers.find((p) => p.address === payer)!.privateKey;
  return apiCall<HoldResource>(world, 'POST', `/v1/authorizations/${draft.id}/signature`, { signature: sign(draft.typedData, key) }, { timeoutMs: 150_000 });
}

const path = (id: string) => `/v1/authorizations/${id}`;

async function until(id: string, ok: (a: HoldResource) => boolean, timeoutMs = FOLLOW_MS): Promise<HoldResource | undefined> {
  return (await getUntil<HoldResource>(world, path(id), ok, timeoutMs))?.body;
}

const settled = (a: HoldResource) => a.state !== 'drafted' && a.state !== 'holding';
const partsDone = (a: HoldResource) => a.captures.every((c) => c.status === 'succeeded' || c.status === 'failed');

async function heldOnce(draft: Draft): Promise<HoldResource> {
  const answer = await signHold(draft);
  expect(answer?.status, JSON.stringify(answer?.body)).toBe(200);
  const a = answer!.body.state === 'held' ? answer!.body : await until(draft.id, settled);
  expect(a?.state).toBe('held');
  return a!;
}

/** One part, as a merchant asks for it (retried under its key through outages). */
function capture(id: string, amount: string | undefined, key: string, extra: { final?: boolean } = {}, budgetMs = FOLLOW_MS) {
  return postAsMerchant<HoldResource & { error?: { code: string; message: string } }>(
    world,
    `${path(id)}/capture`,
    { ...(amount === undefined ? {} : { amount }), ...extra },
    key,
    { budgetMs },
  );
}

/**
 * A part asked and followed to its end (or for `timeoutMs`): the final answer, and the resource once
 * it shows the part and no part is under way (as it stands when the time ran out).
 */
async function captureAndFollow(id: string, amount: string, key: string, timeoutMs = FOLLOW_MS) {
  const parts = (await readHold(world, id))?.captures.length ?? 0;
  const answer = await capture(id, amount, key, {}, timeoutMs);
  const after = await until(id, (a) => a.captures.length > parts && partsDone(a), timeoutMs);
  return { answer, after: after! };
}

/** The escrow's events of one payment, on the chain as it is now (read from anvil, past every proxy). */
async function escrowEvents(hash: Hex, blockTag: 'latest' | 'pending' = 'latest') {
  const logs = await world.publicClient.getContractEvents({ address: hw.escrow.escrow, abi: escrowAbi, fromBlock: hw.at.block, toBlock: blockTag });
  return logs
    .filter((l) => ((l.args as { paymentInfoHash?: Hex }).paymentInfoHash ?? '').toLowerCase() === hash.toLowerCase())
    .map((l) => ({
      name: l.eventName,
      amount: (l.args as { amount?: bigint }).amount ?? 0n,
      tx: (l.transactionHash ?? '0x') as Hex,
      block: l.blockNumber ?? -1n,
      blockHash: l.blockHash as Hex | null,
    }));
}

const sentByMerchant = (blockTag: 'latest' | 'pending') => world.publicClient.getTransactionCount({ address: world.merchant.address, blockTag });

/** Polls `ready` every 25 ms until it holds or `timeoutMs` runs out: whether it held. */
async function when(ready: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await ready().catch(() => false)) return true;
    await sleep(25);
  }
  return false;
}

/**
 * Replaces the last `depth` blocks (the one `txHash` is in among them) with new ones, `txHash` in the
 * first: the transaction lands again in a block of another hash, as after a reorg on a live chain.
 */
async function reorg(depth: number, txHash: Hex): Promise<void> {
  const raw = (await world.publicClient.request({ method: 'eth_getRawTransactionByHash' as never, params: [txHash] as never })) as Hex;
  await world.publicClient.request({ method: 'anvil_reorg' as never, params: [depth, [[raw, 0]]] as never });
}

async function killAndRestartWorker(pauseMs = 500): Promise<void> {
  await kill(world.workers[0]!);
  world.workers.shift();
  await sleep(pauseMs);
  world.workers.unshift(await world.startWorker());
}

const tokenBalance = (account: Address) =>
  world.publicClient.readContract({ address: world.tokenAddress, abi: tokenAbi, functionName: 'balanceOf', args: [account] }) as Promise<bigint>;

async function asOwner(functionName: 'pause' | 'unpause' | 'blacklist' | 'unBlacklist', args: readonly unknown[] = []): Promise<void> {
  const hash = await world.ownerWallet.writeContract({
    address: world.tokenAddress,
    abi: tokenAbi,
    functionName,
    args,
    chain: world.ownerWallet.chain,
    account: world.ownerWallet.account!,
  } as never);
  const receipt = await world.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
}

describe('holds through faults', () => {
  it('1. the worker SIGKILLed between the authorize going out and its confirmation: held once, then captured', async () => {
    const a = await draftHold(0, '10');
    const b = await draftHold(1, '10');
    const sentBefore = await sentByMerchant('pending');
    const signing = [signHold(a), signHold(b)];
    // The moment: both authorizes out, the first mined (its PaymentAuthorized in a block), neither at depth.
    const out = await when(async () => (await sentByMerchant('pending')) >= sentBefore + 2 && (await escrowEvents(a.hold!.paymentInfoHash)).length > 0, 30_000);
    const [evA, evB, head] = await Promise.all([
      escrowEvents(a.hold!.paymentInfoHash, 'pending'),
      escrowEvents(b.hold!.paymentInfoHash, 'pending'),
      world.publicClient.getBlockNumber(),
    ]);
    await kill(world.workers[0]!);
    world.workers.shift();
    const [stateA, stateB] = await Promise.all([readHold(world, a.id), readHold(world, b.id)]);
    console.log(
      `holds, killed mid-authorize: out ${out}; at the kill A ${evA.length ? `mined at ${evA[0]!.block} (head ${head})` : 'in the pool'}, B ${evB.length ? `mined at ${evB[0]!.block}` : 'in the pool'}; read after: ${stateA?.state}/${stateB?.state}`,
    );
    expect(out).toBe(true);
    expect(Number(head - evA[0]!.block) + 1).toBeLessThan(CONFIRMATIONS);
    // Neither was confirmed when the worker died.
    expect([stateA?.state, stateB?.state]).toEqual(['holding', 'holding']);
    await sleep(1_000);
    world.workers.unshift(await world.startWorker());

    const answers = await Promise.all(signing);
    console.log(`holds, killed mid-authorize: the signature answers ${answers.map((x) => x?.status ?? 'none').join(', ')}`);
    for (const draft of [a, b]) {
      const done = await until(draft.id, settled);
      expect.soft({ id: draft.id, state: done?.state, held: done?.hold?.amountHeld, capturable: done?.amountCapturable }).toEqual({
        id: draft.id,
        state: 'held',
        held: '10',
        capturable: '10',
      });
      const events = await escrowEvents(draft.hold!.paymentInfoHash);
      expect.soft(events.map((e) => [e.name, e.amount])).toEqual([['PaymentAuthorized', units('10')]]);
      expect.soft(done?.hold?.authorizeTransactionHash?.toLowerCase()).toBe(events[0]?.tx.toLowerCase());
    }
    // Exactly two transactions for two holds: the kill made no second authorize (a reverted one included).
    expect.soft((await sentByMerchant('latest')) - sentBefore).toBe(2);

    // And the held funds capture.
    for (const [i, draft] of [a, b].entries()) {
      const { answer, after } = await captureAndFollow(draft.id, '2.5', `${draft.id}-after-kill`);
      expect.soft([200, 202]).toContain(answer.status);
      expect.soft(after.captures.map((c) => [c.amount, c.status])).toEqual([['2.5', 'succeeded']]);
      expect.soft(after.amountCapturable).toBe('7.5');
      const events = await escrowEvents(draft.hold!.paymentInfoHash);
      expect
        .soft(events.filter((e) => e.name === 'PaymentCaptured').map((e) => [e.amount, e.tx.toLowerCase()]))
        .toEqual([[units('2.5'), after.captures[0]?.transactionHash?.toLowerCase()]]);
      if (i === 1) {
        const voided = await postAsMerchant(world, `${path(draft.id)}/void`, { reason: 'fault case 1' }, `${draft.id}-void`);
        expect.soft(voided.status).toBe(200);
        const end = await until(draft.id, (x) => x.state !== 'held');
        expect.soft({ state: end?.state, release: end?.hold?.release?.amount }).toEqual({ state: 'captured', release: '7.5' });
      }
    }
  }, 240_000);

  it('2. the node fails while parts are in flight: each part succeeds once', async () => {
    const c = await draftHold(2, '10');
    await heldOnce(c);
    const hash = c.hold!.paymentInfoHash;
    /** Each part asked: its amount, the fault it met, the final answer's status and how the part ended. */
    const parts: { key: string; amount: string; fault: string; status?: number; ended?: string }[] = [];
    const ask = async (amount: string, fault: string) => {
      const key = `${c.id}-part-${parts.length + 1}`;
      const entry: (typeof parts)[number] = { key, amount, fault };
      parts.push(entry);
      const { answer, after } = await captureAndFollow(c.id, amount, key, PART_MS);
      entry.status = answer.status;
      entry.ended = after?.captures[parts.length - 1]?.status;
      return entry.ended === 'succeeded';
    };

    // a) eth_sendRawTransaction reaches the node, its answer never comes back (twice).
    hw.methods.set({ kind: 'lose-answer', methods: ['eth_sendRawTransaction'], times: 2 });
    const a = await ask('2', 'the answer to eth_sendRawTransaction lost twice');
    hw.methods.clear();
    expect.soft(hw.methods.hits.eth_sendRawTransaction ?? 0).toBe(2);

    // b) The node takes the part's transaction; 0.6 s later (the part in a block, its follower on its
    //    way to the depth) it answers no read (logs, head, blocks, receipts: 503) for 6 s. The part is
    //    at depth meanwhile, and must be found once the node is back.
    hw.methods.set({
      kind: 'pass',
      methods: ['eth_sendRawTransaction'],
      times: 1,
      afterwards: { fault: { kind: 'http503', methods: READS }, forMs: 6_000, afterMs: 600 },
    });
    const b = a && (await ask('3', 'no reads answered for 6 s, from 0.6 s after the node took the transaction'));
    hw.methods.clear();

    // c) The part's transaction out; then 30% of every call dropped for 3 s (the harness's proxy).
    //    Parts go to the chain one at a time: after a part that never ended, the next could not go.
    if (b) {
      const sentBefore = await sentByMerchant('pending');
      const third = ask('1.25', '30% of all calls dropped for 3 s after the send');
      const out = await when(async () => (await sentByMerchant('pending')) > sentBefore, 30_000);
      world.proxy.set('drop', 0.3);
      await sleep(3_000);
      world.proxy.clear();
      await third;
      expect.soft(out).toBe(true);
    }
    console.log(
      `holds, node faults: ${JSON.stringify(parts)}; method proxy hits ${JSON.stringify(hw.methods.hits)}; proxy ${JSON.stringify(world.proxy.counts)}`,
    );

    for (const p of parts)
      expect.soft({ fault: p.fault, status: p.status, ended: p.ended }).toEqual({ fault: p.fault, status: expect.toBeOneOf([200, 202]), ended: 'succeeded' });
    // Each part asked again under its key (as after a 202): answered with that part (the stored 200,
    // or the part as it stands now), never with a new one.
    for (const p of parts) {
      const again = await capture(c.id, p.amount, p.key, {}, PART_MS);
      expect.soft({ key: p.key, status: again.status }).toEqual({ key: p.key, status: 200 });
    }
    const after = (await readHold(world, c.id))!;
    expect.soft(after.captures.map((x) => [x.amount, x.status])).toEqual(parts.map((p) => [p.amount, 'succeeded']));
    // On the chain: one PaymentCaptured per part asked, in the transaction the part names.
    const captured = (await escrowEvents(hash)).filter((e) => e.name === 'PaymentCaptured');
    expect.soft(captured.map((e) => [e.amount, e.tx.toLowerCase()])).toEqual(after.captures.map((x) => [units(x.amount), x.transactionHash?.toLowerCase()]));

    // d) The same outage, 0.6 s after the node took a hold's authorize: held all the same, once.
    const d = await draftHold(8, '5');
    hw.methods.set({
      kind: 'pass',
      methods: ['eth_sendRawTransaction'],
      times: 1,
      afterwards: { fault: { kind: 'http503', methods: READS }, forMs: 6_000, afterMs: 600 },
    });
    // Its answer waits for the hold: not awaited here, the resource is followed instead.
    void signHold(d);
    const placed = await until(d.id, settled, PART_MS);
    hw.methods.clear();
    const authorized = (await escrowEvents(d.hold!.paymentInfoHash)).filter((e) => e.name === 'PaymentAuthorized');
    console.log(`holds, node faults: the authorize under the outage: ${placed?.state}, ${authorized.length} PaymentAuthorized`);
    expect.soft({ state: placed?.state, held: placed?.hold?.amountHeld, authorized: authorized.length }).toEqual({ state: 'held', held: '5', authorized: 1 });
  }, 240_000);

  it('3. the worker SIGKILLed with parts of several holds in flight; every part asked again under its key: none lost, none twice', async () => {
    const drafts = [await draftHold(3, '10'), await draftHold(4, '10'), await draftHold(5, '10')];
    const placed = await Promise.all(drafts.map((d) => signHold(d)));
    for (const [i, d] of drafts.entries()) {
      if (placed[i]?.body?.state !== 'held') await until(d.id, settled);
    }
    const amounts = ['1', '2', '3'];
    const keys = drafts.flatMap((d) => amounts.map((amount, k) => ({ id: d.id, amount, key: `${d.id}-kill-${k + 1}` })));
    const sentBefore = await sentByMerchant('pending');
    const asked = keys.map((k) => capture(k.id, k.amount, k.key));
    // Killed once the first parts are out and the others still to go (parts of one hold go one at a time).
    const out = await when(async () => (await sentByMerchant('pending')) > sentBefore, 30_000);
    await sleep(150);
    const before = await Promise.all(drafts.map((d) => readHold(world, d.id)));
    await killAndRestartWorker(1_000);
    const atKill = before.map((a) => a?.captures.map((x) => x.status).join('/') ?? '?');
    const firstAnswers = await Promise.all(asked);
    console.log(`holds, killed mid-parts: out ${out}; parts at the kill ${atKill.join(' | ')}; first answers ${firstAnswers.map((x) => x.status).join(',')}`);
    expect(out).toBe(true);
    for (const x of firstAnswers) expect.soft([200, 202]).toContain(x.status);

    // After the restart every part is asked again with its key: the same part, never a new one.
    const retried = await Promise.all(keys.map((k) => capture(k.id, k.amount, k.key)));
    for (const [i, x] of retried.entries()) {
      expect.soft([200, 202], keys[i]!.key).toContain(x.status);
      // A stored 200 is replayed as it was answered; any other answer is the hold as it stands.
      if (!x.replayed) expect.soft(x.body.captures?.length, keys[i]!.key).toBe(3);
    }
    const ends = await Promise.all(drafts.map((d) => until(d.id, (a) => a.captures.length >= 3 && partsDone(a))));
    for (const [i, d] of drafts.entries()) {
      const a = ends[i]!;
      expect.soft(a.captures.map((x) => [x.amount, x.status]).sort()).toEqual(amounts.map((amount) => [amount, 'succeeded']));
      expect.soft(a.amountCaptured).toBe('6');
      const captured = (await escrowEvents(d.hold!.paymentInfoHash)).filter((e) => e.name === 'PaymentCaptured');
      expect.soft(captured.map((e) => e.tx.toLowerCase()).sort()).toEqual(a.captures.map((x) => x.transactionHash?.toLowerCase()).sort());
      expect.soft(captured.map((e) => e.amount).sort()).toEqual(amounts.map(units).sort());
    }
    // And then: a final part on the first (the rest goes back by itself), a void on the second; the third stays held.
    const final = await capture(drafts[0]!.id, '1', `${drafts[0]!.id}-final`, { final: true });
    expect.soft([200, 202]).toContain(final.status);
    const voided = await postAsMerchant(world, `${path(drafts[1]!.id)}/void`, { reason: 'fault case 3' }, `${drafts[1]!.id}-void`);
    expect.soft(voided.status).toBe(200);
    const [f, v] = await Promise.all([until(drafts[0]!.id, (x) => x.state !== 'held'), until(drafts[1]!.id, (x) => x.state !== 'held')]);
    expect.soft({ state: f?.state, captured: f?.amountCaptured, release: f?.hold?.release }).toMatchObject({
      state: 'captured',
      captured: '7',
      release: { kind: 'void', amount: '3' },
    });
    expect.soft({ state: v?.state, captured: v?.amountCaptured, release: v?.hold?.release }).toMatchObject({
      state: 'captured',
      captured: '6',
      release: { kind: 'void', amount: '4' },
    });
  }, 240_000);

  it("4. a reorg of the authorize's block before its depth: followed again, held once; and of a part's block", async () => {
    const g = await draftHold(6, '10');
    const hash = g.hold!.paymentInfoHash;
    const signing = signHold(g);
    // The authorize mined, not yet at depth: its block, the one before and any after replaced, the
    // authorize landing again in the first new block (another number, another hash).
    let seen: Awaited<ReturnType<typeof escrowEvents>>[number] | undefined;
    const mined = await when(async () => {
      seen = (await escrowEvents(hash))[0];
      return seen !== undefined;
    }, 30_000);
    expect(mined).toBe(true);
    const head = await world.publicClient.getBlockNumber();
    const depth = Number(head - seen!.block) + 2;
    expect(depth).toBeLessThan(CONFIRMATIONS);
    expect((await readHold(world, g.id))?.state).toBe('holding');
    await reorg(depth, seen!.tx);
    const answer = await signing;
    const a = answer?.body?.state === 'held' ? answer.body : await until(g.id, settled);
    expect.soft(a?.state).toBe('held');
    const events = await escrowEvents(hash);
    console.log(
      `holds, reorg: the authorize was mined at ${seen!.block} (${seen!.blockHash}), ${depth} blocks reorged; now ${events.map((e) => `${e.name} at ${e.block} (${e.blockHash})`).join(', ')}`,
    );
    expect.soft(events.map((e) => e.name)).toEqual(['PaymentAuthorized']);
    // The reorg took the block it was in: the event the hold counts is the one the chain kept.
    expect.soft(events[0]?.blockHash).not.toBe(seen!.blockHash);
    expect.soft(a?.hold?.authorizeTransactionHash?.toLowerCase()).toBe(events[0]?.tx.toLowerCase());

    // A part whose block is reorged away before its depth: one PaymentCaptured, where the chain kept it.
    const part = capture(g.id, '4', `${g.id}-reorged-part`);
    let captured: Awaited<ReturnType<typeof escrowEvents>>[number] | undefined;
    const partMined = await when(async () => {
      captured = (await escrowEvents(hash)).find((e) => e.name === 'PaymentCaptured');
      return captured !== undefined;
    }, 30_000);
    expect(partMined).toBe(true);
    const partDepth = Number((await world.publicClient.getBlockNumber()) - captured!.block) + 2;
    await reorg(partDepth, captured!.tx);
    const partAnswer = await part;
    expect.soft([200, 202]).toContain(partAnswer.status);
    const after = await until(g.id, (a) => a.captures.length >= 1 && partsDone(a));
    const afterEvents = await escrowEvents(hash);
    const kept = afterEvents.filter((e) => e.name === 'PaymentCaptured');
    expect.soft(after?.captures.map((x) => [x.amount, x.status])).toEqual([['4', 'succeeded']]);
    expect.soft(kept.map((e) => [e.amount, e.tx.toLowerCase()])).toEqual([[units('4'), after?.captures[0]?.transactionHash?.toLowerCase()]]);
    expect.soft(kept[0]?.blockHash).not.toBe(captured!.blockHash);
    expect.soft(String(kept[0]?.block)).toBe(after?.captures[0]?.blockNumber);
  }, 240_000);

  it('5. a capture the escrow reverts (token paused, receiver blacklisted): the part fails with its code, nothing moves; then a new part succeeds', async () => {
    const h = await draftHold(7, '10');
    await heldOnce(h);
    const hash = h.hold!.paymentInfoHash;
    const money = async () => ({ store: await tokenBalance(hw.tokenStore), merchant: await tokenBalance(world.merchant.address) });

    const refused = async (key: string, why: string) => {
      const before = await money();
      const sentBefore = await sentByMerchant('pending');
      const parts = (await readHold(world, h.id))!.captures.length;
      const answer = await capture(h.id, '1', key);
      const a = (await until(h.id, (x) => x.captures.length > parts && partsDone(x)))!;
      const part = a.captures[a.captures.length - 1]!;
      console.log(
        `holds, ${why}: ${answer.status} ${JSON.stringify(answer.body?.error ?? answer.body?.state)}; part ${part.status} ${JSON.stringify(part.failure)}`,
      );
      expect.soft(answer.status, why).toBeGreaterThanOrEqual(400);
      expect.soft(answer.body?.error?.code, why).toBe('token_policy_blocked');
      expect
        .soft({ status: part.status, code: part.failure?.code, tx: part.transactionHash }, why)
        .toEqual({ status: 'failed', code: 'token_policy_blocked', tx: null });
      expect.soft(await money(), why).toEqual(before);
      // The relayer sent nothing: the simulation at the pending block refused it.
      expect.soft((await sentByMerchant('pending')) - sentBefore, why).toBe(0);
      // The same key again: the same failure, no new part.
      const again = await capture(h.id, '1', key);
      expect.soft({ status: again.status, code: again.body?.error?.code }, why).toEqual({ status: answer.status, code: 'token_policy_blocked' });
      const reread = (await readHold(world, h.id))!;
      expect.soft(reread.captures.length, why).toBe(a.captures.length);
      return a;
    };
    const succeeds = async (key: string, why: string) => {
      const { answer, after } = await captureAndFollow(h.id, '1', key);
      expect.soft([200, 202], why).toContain(answer.status);
      expect.soft(after.captures[after.captures.length - 1]?.status, why).toBe('succeeded');
      return after;
    };

    await asOwner('pause');
    const paused = await refused(`${h.id}-paused`, 'token paused');
    expect.soft(paused.amountCapturable).toBe('10');
    await asOwner('unpause');
    await succeeds(`${h.id}-unpaused`, 'after unpause');

    await asOwner('blacklist', [world.merchant.address]);
    await refused(`${h.id}-blacklisted`, 'merchant blacklisted');
    await asOwner('unBlacklist', [world.merchant.address]);
    const last = await succeeds(`${h.id}-unblacklisted`, 'after unBlacklist');
    expect.soft(last.captures.map((x) => [x.amount, x.status])).toEqual([
      ['1', 'failed'],
      ['1', 'succeeded'],
      ['1', 'failed'],
      ['1', 'succeeded'],
    ]);
    expect.soft({ captured: last.amountCaptured, capturable: last.amountCapturable }).toEqual({ captured: '2', capturable: '8' });
    const events = await escrowEvents(hash);
    expect.soft(events.map((e) => e.name)).toEqual(['PaymentAuthorized', 'PaymentCaptured', 'PaymentCaptured']);

    const voided = await postAsMerchant(world, `${path(h.id)}/void`, { reason: 'fault case 5' }, `${h.id}-void`);
    expect.soft(voided.status).toBe(200);
    const end = await until(h.id, (x) => x.state !== 'held');
    expect.soft({ state: end?.state, release: end?.hold?.release?.amount }).toEqual({ state: 'captured', release: '8' });
  }, 240_000);

  it('the audit: every hold of this file against the escrow', async () => {
    const result = await auditHolds(hw, ids, { caseName: 'holds', payerOf });
    console.log(`holds audit: ${result.details.join('; ')}`);
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
    // Something was audited: every case made its holds.
    expect(result.audited).toBeGreaterThanOrEqual(8);
  }, 120_000);
});
