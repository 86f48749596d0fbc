// Holds on the production shape: the Temporal server on PostgreSQL, two workers, the escrow on the
// chain. Four held payments captured in two parts each and voided, one worker SIGKILLed while the parts
// are in flight (the other carries on), every part asked again under its key; audited like the fault
// suite: each hold held once, each part captured once, the escrow's balance what the holds say.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { apiCall, getUntil, postAsMerchant, sign } from '../faults/drive.js';
import { kill } from '../faults/harness.js';
import { auditHolds, startHoldWorld, type HoldResource, type HoldWorld } from '../faults/holdAudit.js';

let hw: HoldWorld;
const ids: string[] = [];
const payerOf = new Map<string, Address>();

beforeAll(async () => {
  hw = await startHoldWorld({ temporal: 'postgres', workers: 2 });
}, 300_000);
afterAll(() => hw?.stop());

const follow = (id: string, ok: (a: HoldResource) => boolean) => getUntil<HoldResource>(hw.world, `/v1/authorizations/${id}`, ok, 120_000);

describe('holds on the Temporal server with PostgreSQL', () => {
  it('holds, captures in parts across a worker SIGKILL, voids the rest: each part once, audited', async () => {
    const { world } = hw;
    const holds = await Promise.all(
      [0, 1, 2, 3].map(async (i) => {
        const payer = world.payers[i]!;
        const orderId = `pg-hold-${process.pid}-${Date.now()}-${i}`;
        const created = await postAsMerchant<HoldResource & { typedData: unknown }>(
          world,
          '/v1/authorizations',
          { orderId, payer: payer.address, amount: '10', hold: true },
          `create-${orderId}`,
          { budgetMs: 60_000 },
        );
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        ids.push(created.body.id);
        payerOf.set(created.body.id, payer.address);
        const signed = await apiCall<HoldResource>(
          world,
          'POST',
          `/v1/authorizations/${created.body.id}/signature`,
          { signature: sign(created.body.typedData, payer.privateKey) },
          { timeoutMs: 120_000 },
        );
        expect(signed?.status, JSON.stringify(signed?.body)).toBe(200);
        return created.body.id;
      }),
    );
    for (const id of holds) expect((await follow(id, (a) => a.state === 'held'))?.body.state).toBe('held');

    // Every hold's first part at once; the first worker SIGKILLed while they are on their way.
    const parts = holds.map((id) =>
      postAsMerchant<HoldResource>(world, `/v1/authorizations/${id}/capture`, { amount: '3' }, `${id}-part-1`, { budgetMs: 120_000 }),
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    await kill(world.workers[0]!);
    world.workers.shift();
    for (const answer of await Promise.all(parts)) expect([200, 202]).toContain(answer.status);
    // Asked again under the same keys, then the second parts: one capture per key.
    for (const id of holds) {
      const again = await postAsMerchant<HoldResource>(world, `/v1/authorizations/${id}/capture`, { amount: '3' }, `${id}-part-1`, { budgetMs: 120_000 });
      expect([200, 202]).toContain(again.status);
      const second = await postAsMerchant<HoldResource>(world, `/v1/authorizations/${id}/capture`, { amount: '2.5' }, `${id}-part-2`, { budgetMs: 120_000 });
      expect([200, 202]).toContain(second.status);
    }
    world.workers.push(await world.startWorker());
    for (const id of holds) {
      const parted = await follow(id, (a) => a.captures.length === 2 && a.captures.every((c) => c.status === 'succeeded'));
      expect(parted?.body.amountCaptured).toBe('5.5');
      const voided = await postAsMerchant<HoldResource>(world, `/v1/authorizations/${id}/void`, { reason: 'shipped short' }, `${id}-void`, {
        budgetMs: 60_000,
      });
      expect(voided.status).toBe(200);
      const done = await follow(id, (a) => a.state !== 'held');
      expect(done?.body).toMatchObject({ state: 'captured', amountCaptured: '5.5', amountCapturable: '0' });
    }
  });

  it('ends with the audit: every hold held once, every part once, the escrow as the holds say', async () => {
    const result = await auditHolds(hw, ids, { caseName: 'postgres holds', payerOf });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  });
});
