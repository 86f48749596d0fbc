// Case 1: the worker is SIGKILLed while captures are in every step (precheck, relayer signing and
// broadcast, inclusion, depth), then restarted; and two workers where one dies for good.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from './audit.js';
import { FULL, kill, startWorld, type World } from './harness.js';
import { captureInBackground, createStored, killWorkerRepeatedly, settleCaptures } from './drive.js';

const CAPTURES = FULL ? 120 : 12;
const KILLS = FULL ? 8 : 2;

describe('worker killed mid-capture', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ workers: 2 });
  }, 240_000);
  afterAll(() => world?.stop());

  it(`${CAPTURES} captures survive ${KILLS} SIGKILLs of a worker and the death of the second one`, async () => {
    const before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
    const ids: string[] = [];
    for (let i = 0; i < CAPTURES; i += 1) ids.push(await createStored(world, i));
    const captures = ids.map((id) => captureInBackground(world, id));
    // The second worker dies for good; the first is killed and restarted at random moments.
    await kill(world.workers[1]!);
    await killWorkerRepeatedly(world, KILLS, 1_500);
    const states = await settleCaptures(world, ids, captures, 120_000);
    expect(states.map((a) => a?.state)).toEqual(ids.map(() => 'captured'));
    const result = await audit(world, ids, { caseName: 'worker killed', merchantTxBefore: before });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  }, 600_000);
});
