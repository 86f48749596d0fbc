// Case 1: the worker is SIGKILLed while captures are in every step (precheck, relayer signing and
// broadcast, inclusion, depth), then restarted; and two workers where one dies for good.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from './audit.js';
import { FULL, eventually, kill, sleep, startWorld, type World } from './harness.js';
import { captureInBackground, createStored } from './drive.js';

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
    for (let k = 0; k < KILLS; k += 1) {
      await sleep(200 + Math.floor(Math.random() * 1_500));
      await kill(world.workers[0]!);
      world.workers.shift();
      world.workers.unshift(await world.startWorker());
    }
    await Promise.all(captures);
    // Captures cut off by a kill continue in their workflows; retry the ones left stored, as an order service would.
    for (const id of ids) {
      const a = await world.client.getAuthorization(id);
      if (a.state === 'stored') await captureInBackground(world, id);
    }
    const states = await Promise.all(ids.map((id) => eventually(() => world.client.getAuthorization(id), (a) => a.state === 'captured', 120_000)));
    expect(states.map((a) => a?.state)).toEqual(ids.map(() => 'captured'));
    const result = await audit(world, ids, { caseName: 'worker killed', merchantTxBefore: before });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  }, 600_000);
});
