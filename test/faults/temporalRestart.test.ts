// Case 2: the Temporal server is killed (SIGKILL) and restarted on its SQLite file in the middle of
// a burst of captures. Workers and clients reconnect; every capture completes exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from './audit.js';
import { FULL, eventually, sleep, startWorld, type World } from './harness.js';
import { captureInBackground, createStored } from './drive.js';

const CAPTURES = FULL ? 50 : 10;

describe('Temporal server restarted', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  }, 240_000);
  afterAll(() => world?.stop());

  it(`${CAPTURES} captures complete across a Temporal server kill and restart`, async () => {
    const before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
    const ids: string[] = [];
    for (let i = 0; i < CAPTURES; i += 1) ids.push(await createStored(world, i));
    const captures = ids.map((id) => captureInBackground(world, id));
    await sleep(800);
    await world.restartTemporal();
    await Promise.all(captures);
    for (const id of ids) {
      const a = await eventually(
        () => world.client.authorizations.get(id),
        () => true,
        60_000,
      );
      if (a?.state === 'stored') await captureInBackground(world, id);
    }
    const states = await Promise.all(
      ids.map((id) =>
        eventually(
          () => world.client.authorizations.get(id),
          (a) => a.state === 'captured',
          180_000,
        ),
      ),
    );
    expect(states.map((a) => a?.state)).toEqual(ids.map(() => 'captured'));
    const result = await audit(world, ids, { caseName: 'temporal restarted', merchantTxBefore: before });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  }, 600_000);
});
