// Case 4: the node misbehaves (HTTP 503 and 429, dropped connections, malformed JSON, a 10 s stall),
// for a fraction of calls and then for all of them for a while. Captures complete once it recovers;
// reads keep answering meanwhile (they come from Temporal, not the node).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from './audit.js';
import { FULL, sleep, startWorld, type World } from './harness.js';
import { captureInBackground, createStored, settleCaptures } from './drive.js';
import type { Fault } from './faultProxy.js';

const CAPTURES = FULL ? 60 : 10;

describe('the node misbehaves', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  }, 240_000);
  afterAll(() => world?.stop());

  it(`${CAPTURES} captures through 503/429/drops/malformed answers and a full stall`, async () => {
    const before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
    const ids: string[] = [];
    for (let i = 0; i < CAPTURES; i += 1) ids.push(await createStored(world, i));
    const captures = ids.map((id) => captureInBackground(world, id));
    const faults: [Fault, number][] = [
      ['http503', 0.4],
      ['http429', 0.4],
      ['drop', 0.3],
      ['malformed', 0.3],
    ];
    for (const [fault, fraction] of faults) {
      world.proxy.set(fault, fraction);
      await sleep(FULL ? 3_000 : 1_500);
    }
    // Everything stalls for 10 s: reads must still answer quickly.
    world.proxy.set('stall', 1, 10_000);
    const readStarted = Date.now();
    const read = await world.client.authorizations.get(ids[0]!);
    expect(read.id).toBe(ids[0]);
    expect(Date.now() - readStarted).toBeLessThan(2_000);
    await sleep(10_000);
    world.proxy.clear();
    const states = await settleCaptures(world, ids, captures, 180_000);
    expect(states.map((a) => a?.state)).toEqual(ids.map(() => 'captured'));
    expect(world.proxy.counts.http503 + world.proxy.counts.stall).toBeGreaterThan(0);
    const result = await audit(world, ids, { caseName: 'node faults', merchantTxBefore: before });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  }, 600_000);
});
