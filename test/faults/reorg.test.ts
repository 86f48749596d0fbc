// Case 6: reorgs. A capture whose block is reorganized away while it waits for its depth goes back
// to waiting and ends captured in the block the chain keeps; a reorg after `captured` (deeper than
// nothing, shallower than the depth) still leaves exactly one AuthorizationUsed log for the nonce.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from './audit.js';
import { eventually, startWorld, type World } from './harness.js';
import { captureInBackground, createStored } from './drive.js';

describe('reorgs around a capture', () => {
  let world: World;
  beforeAll(async () => {
    // 15 blocks (3 s) to captured: time for a reorg while preconfirmed.
    world = await startWorld({ env: { AUTHCAP_CONFIRMATIONS: '15' } });
  }, 240_000);
  afterAll(() => world?.stop());

  it('a preconfirmed capture reorged away ends captured in the surviving block; a later reorg leaves one log', async () => {
    const before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
    const ids = [await createStored(world, 0), await createStored(world, 1)];
    const first = captureInBackground(world, ids[0]!);
    const preconfirmed = await eventually(
      () => world.client.authorizations.get(ids[0]!),
      (a) => Boolean(a.capture?.preconfirmedAt) && a.state === 'capturing',
      60_000,
    );
    expect(preconfirmed?.capture?.blockHash).toBeTruthy();
    // Replace the last 3 blocks: the capture's block among them (its transaction returns to the pool).
    await world.publicClient.request({ method: 'anvil_reorg' as never, params: [3, []] as never });
    await first;
    const captured = await eventually(
      () => world.client.authorizations.get(ids[0]!),
      (a) => a.state === 'captured',
      120_000,
    );
    expect(captured?.state).toBe('captured');
    const block = await world.publicClient.getBlock({ blockNumber: BigInt(captured!.capture!.blockNumber!) });
    expect(block.hash).toBe(captured!.capture!.blockHash);

    // The second is captured first, then a 2-block reorg hits the chain head.
    await captureInBackground(world, ids[1]!);
    expect((await world.client.authorizations.get(ids[1]!)).state).toBe('captured');
    await world.publicClient.request({ method: 'anvil_reorg' as never, params: [2, []] as never });
    // Let the reorged transactions be mined again, then audit once.
    await eventually(
      async () => {
        const [latest, pending] = await Promise.all([
          world.publicClient.getTransactionCount({ address: world.merchant.address, blockTag: 'latest' }),
          world.publicClient.getTransactionCount({ address: world.merchant.address, blockTag: 'pending' }),
        ]);
        return latest === pending;
      },
      (done) => done,
      30_000,
    );
    const result = await audit(world, ids, { caseName: 'reorgs', merchantTxBefore: before });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  }, 600_000);
});
