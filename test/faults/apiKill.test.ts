// Case 3: the API process is killed while captures are in flight, then restarted. What it accepted
// still completes; a caller retrying with the same Idempotency-Key gets the same answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from './audit.js';
import { FULL, eventually, kill, startWorld, type World } from './harness.js';
import { createStored } from './drive.js';

const CAPTURES = FULL ? 40 : 8;

describe('API process killed', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ api: true });
  }, 240_000);
  afterAll(() => world?.stop());

  const post = (path: string, key: string) =>
    fetch(`${world.apiUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${world.apiKey}`, 'idempotency-key': key },
      body: '{}',
    }).then(
      async (res) => ({ status: res.status, body: (await res.json()) as { id?: string; state?: string } }),
      () => undefined,
    );

  it(`${CAPTURES} captures accepted before the kill complete, and retries get the same answer`, async () => {
    const before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
    const ids: string[] = [];
    for (let i = 0; i < CAPTURES; i += 1) ids.push(await createStored(world, i));
    const first = ids.map((id) => post(`/v1/authorizations/${id}/capture`, `cap-${id}`));
    await new Promise((r) => setTimeout(r, 300));
    await kill(world.api!);
    await Promise.all(first);
    await world.startApi();
    // Retries with the same keys: a replay of the stored answer, or the capture's own outcome.
    const retried = await Promise.all(
      ids.map((id) =>
        eventually(
          () => post(`/v1/authorizations/${id}/capture`, `cap-${id}`).then((r) => r!),
          (r) => r.status === 200,
          120_000,
        ),
      ),
    );
    for (const [i, r] of retried.entries()) {
      expect(r?.status).toBe(200);
      expect(r?.body.id).toBe(ids[i]);
      expect(r?.body.state).toBe('captured');
    }
    // And again: the very same answer.
    const replay = await post(`/v1/authorizations/${ids[0]}/capture`, `cap-${ids[0]}`);
    expect(replay?.body).toEqual(retried[0]?.body);
    const result = await audit(world, ids, { caseName: 'api killed', merchantTxBefore: before });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  }, 600_000);
});
