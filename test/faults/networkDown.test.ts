// Case: two networks, one of them down (issue 27). Captures run on both; the second network's node
// stalls, then stops answering at all, while the first keeps capturing at its own pace. Once the node
// is back, the second network's captures finish. Each network is audited against its own chain:
// nothing lost, nothing twice, nothing stuck, no gap in the merchant key's nonces.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from './audit.js';
import { FULL, eventually, sleep, startWorld, type World } from './harness.js';
import { captureInBackground, createStored, settleCaptures } from './drive.js';

const PER_NETWORK = FULL ? 30 : 8;
/** How long the second network's node is out: stalled, then refusing every connection. */
const OUTAGE_MS = FULL ? 30_000 : 16_000;

describe('one network down, the other carries on', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ networks: 2 });
  }, 300_000);
  afterAll(() => world?.stop());

  it(`${PER_NETWORK} captures per network while the second network's node stalls and dies`, async () => {
    const first = world;
    const second = world.onSecond();
    const network1 = `eip155:${world.anvil.chainId}`;
    const network2 = world.second!.network;
    const before1 = await first.publicClient.getTransactionCount({ address: world.merchant.address });
    const before2 = await second.publicClient.getTransactionCount({ address: world.merchant.address });
    const ids1: string[] = [];
    const ids2: string[] = [];
    for (let i = 0; i < PER_NETWORK; i += 1) {
      ids1.push(await createStored(world, i, '0.01', undefined, network1));
      ids2.push(await createStored(world, i, '0.01', undefined, network2));
    }

    // The second network's node goes away: stalled for a while, then refusing every connection.
    world.second!.proxy.set('stall', 1, OUTAGE_MS);
    const outageStarted = Date.now();
    const captures2 = ids2.map((id) => captureInBackground(world, id));
    const captures1 = ids1.map((id) => captureInBackground(world, id));
    await sleep(OUTAGE_MS / 2);
    world.second!.proxy.set('drop', 1);

    // The first network's captures all finish while the second is still out.
    const captured1 = await Promise.all(
      ids1.map((id) =>
        eventually(
          () => world.client.authorizations.get(id),
          (a) => a.state === 'captured',
          OUTAGE_MS,
        ),
      ),
    );
    const firstDoneAfterMs = Date.now() - outageStarted;
    expect(captured1.map((a) => a?.state)).toEqual(ids1.map(() => 'captured'));
    expect(firstDoneAfterMs).toBeLessThan(OUTAGE_MS);
    // And nothing of the second network's was captured meanwhile: its node never answered.
    const during2 = await Promise.all(ids2.map((id) => world.client.authorizations.get(id)));
    expect(during2.filter((a) => a.state === 'captured')).toEqual([]);

    const remaining = OUTAGE_MS - (Date.now() - outageStarted);
    if (remaining > 0) await sleep(remaining);
    world.second!.proxy.clear();
    await Promise.all(captures1);
    const states2 = await settleCaptures(world, ids2, captures2, 180_000);
    expect(states2.map((a) => a?.state)).toEqual(ids2.map(() => 'captured'));
    expect(world.second!.proxy.counts.stall + world.second!.proxy.counts.drop).toBeGreaterThan(0);

    for (const [label, onChain, ids, before] of [
      ['first network', first, ids1, before1],
      ['second network down', second, ids2, before2],
    ] as const) {
      const result = await audit(onChain, [...ids], { caseName: `two networks: ${label}`, merchantTxBefore: before });
      expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
      expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
    }
  }, 600_000);
});
