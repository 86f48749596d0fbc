// Case 5: a capture transaction dropped from the node's pool. The relayer notices (after 30 s) that
// its transaction is gone while the authorization is still unused, and sends it again; the merchant
// account is never left with a nonce gap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { audit } from './audit.js';
import { eventually, startWorld, type World } from './harness.js';
import { captureInBackground, createStored } from './drive.js';

describe('transactions dropped from the pool', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  }, 240_000);
  afterAll(() => world?.stop());

  it('a dropped capture is resubmitted and captured; no nonce gap', async () => {
    const before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
    const id = await createStored(world, 0);
    await world.testClient.setAutomine(false);
    await world.testClient.setIntervalMining({ interval: 0 });
    const capture = captureInBackground(world, id);
    const hash = await eventually(
      async () => {
        const pool = (await world.publicClient.request({ method: 'txpool_content' as never })) as { pending: Record<string, Record<string, { hash: Hex }>> };
        const ours = Object.entries(pool.pending).find(([from]) => from.toLowerCase() === world.merchant.address.toLowerCase());
        return ours ? Object.values(ours[1])[0]!.hash : undefined;
      },
      (h) => Boolean(h),
      60_000,
    );
    expect(hash).toBeTruthy();
    await world.publicClient.request({ method: 'anvil_dropTransaction' as never, params: [hash] as never });
    await world.testClient.setIntervalMining({ interval: 1 });
    await capture;
    const captured = await eventually(
      () => world.client.authorizations.get(id),
      (a) => a.state === 'captured',
      150_000,
    );
    expect(captured?.state).toBe('captured');
    const result = await audit(world, [id], { caseName: 'dropped transaction', merchantTxBefore: before });
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  }, 300_000);
});
