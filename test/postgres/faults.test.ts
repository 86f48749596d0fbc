// Faults on the production shape, each ending with the fault suite's audit: a worker SIGKILLed
// mid-capture while the other carries on, an API process killed while the other answers, the
// Temporal server killed and restarted, PostgreSQL restarted under it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from '../faults/audit.js';
import { captureInBackground, createStored } from '../faults/drive.js';
import { eventually, kill, sleep, type World } from '../faults/harness.js';
import { call, startProductionWorld, storedViaApi } from './world.js';

const CAPTURES = 10;

describe('faults on the Temporal server with PostgreSQL, two workers, two APIs', () => {
  let world: World;
  let before = 0;
  const ids: string[] = [];
  beforeAll(async () => {
    world = await startProductionWorld();
    before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
  }, 300_000);
  afterAll(() => world?.stop());

  /** Every authorization so far captured, then the audit of all of them. */
  const settleAndAudit = async (caseName: string, batch: string[]) => {
    for (const id of batch) {
      const a = await eventually(
        () => world.client.authorizations.get(id),
        () => true,
        60_000,
      );
      if (a?.state === 'stored') await captureInBackground(world, id);
    }
    const finals = await Promise.all(
      batch.map((id) =>
        eventually(
          () => world.client.authorizations.get(id),
          (a) => a.state === 'captured',
          180_000,
        ),
      ),
    );
    expect(finals.map((a) => a?.state)).toEqual(batch.map(() => 'captured'));
    const result = await audit(world, ids, { caseName, merchantTxBefore: before });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  };

  /** CAPTURES stored authorizations captured at once, the fault a moment into it, then settled and audited. */
  const capturesAcross = async (caseName: string, fault: () => Promise<void>) => {
    const batch: string[] = [];
    for (let i = 0; i < CAPTURES; i += 1) batch.push(await createStored(world, i));
    ids.push(...batch);
    const captures = batch.map((id) => captureInBackground(world, id));
    await sleep(300);
    await fault();
    await Promise.all(captures);
    await settleAndAudit(caseName, batch);
  };

  it(`a worker SIGKILLed mid-capture: the other worker finishes all ${CAPTURES}`, async () => {
    await capturesAcross('pg worker killed', () => kill(world.workers.shift()!));
    // Back to two workers for the next cases.
    world.workers.push(await world.startWorker());
  });

  it('an API process killed: the other answers, and retries there get the same answers', async () => {
    const batch: { id: string }[] = [];
    for (let i = 0; i < CAPTURES; i += 1) batch.push(await storedViaApi(world, i));
    ids.push(...batch.map((b) => b.id));
    const first = batch.map(({ id }) =>
      call(world, 'POST', `/v1/authorizations/${id}/capture`, {}, { api: 0, idempotencyKey: `cap-${id}` }).catch(() => undefined),
    );
    await sleep(200);
    await kill(world.apis[0]!);
    await Promise.all(first);
    const retried = await Promise.all(
      batch.map(({ id }) =>
        eventually(
          () => call(world, 'POST', `/v1/authorizations/${id}/capture`, {}, { api: 1, idempotencyKey: `cap-${id}` }),
          (r) => r.status === 200,
          120_000,
        ),
      ),
    );
    for (const [i, r] of retried.entries()) expect(r.body).toMatchObject({ id: batch[i]!.id, state: 'captured' });
    await settleAndAudit(
      'pg api killed',
      batch.map((b) => b.id),
    );
    await world.startApi();
    expect((await call(world, 'GET', '/readyz', undefined, { api: 0 })).status).toBe(200);
  });

  it('the Temporal server killed and restarted mid-capture', async () => {
    await capturesAcross('pg temporal restarted', () => world.restartTemporal());
  });

  it('PostgreSQL restarted under the running server mid-capture', async () => {
    await capturesAcross('pg postgres restarted', () => world.restartPostgres());
  });
});
