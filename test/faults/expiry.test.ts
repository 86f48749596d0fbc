// Case 8: many open authorizations reach their deadlines together: every one ends `expired`, its
// nonce unused onchain, and nothing is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from './audit.js';
import { FULL, eventually, sleep, startWorld, type World } from './harness.js';
import { sign } from './drive.js';
import { tokenAbi } from '../../domain/tokenAbi.js';

const OPEN = FULL ? 1_000 : 40;

describe('expiry at scale', () => {
  let world: World;
  beforeAll(async () => {
    // Expiry is the deadline timer's job: no periodic re-reads (a thousand workflows ticking every
    // 2 s would measure issue 9's open-authorization cost, not expiry).
    world = await startWorld({ env: { AUTHCAP_RECONCILE_SECONDS: '3600' } });
  }, 240_000);
  afterAll(() => world?.stop());

  it(`${OPEN} open authorizations expire together, nonces unused`, async () => {
    const before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
    const validForSeconds = FULL ? 240 : 40;
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < OPEN) {
          const i = next++;
          const p = world.payers[i % world.payers.length]!;
          const drafted = await world.client.authorizations.create({
            orderId: `expire-${process.pid}-${i}`,
            payer: p.address,
            amount: '0.01',
            validForSeconds,
          });
          // Half stored (signed), half left drafted.
          if (i % 2 === 0) await world.client.authorizations.sign(drafted.id, sign(drafted.typedData, p.privateKey));
          ids.push(drafted.id);
        }
      }),
    );
    // Wait past the deadline, then read every one (a few at a time: a thousand pollers would only load the server).
    await sleep((validForSeconds + 15) * 1000);
    const states: Awaited<ReturnType<typeof world.client.authorizations.get>>[] = [];
    for (let i = 0; i < ids.length; i += 20) {
      states.push(
        ...(await Promise.all(
          ids.slice(i, i + 20).map((id) =>
            eventually(
              () => world.client.authorizations.get(id),
              (a) => a.state === 'expired',
              120_000,
            ),
          ),
        )),
      );
    }
    expect(states.filter((a) => a?.state !== 'expired').map((a) => `${a?.id}: ${a?.state}`)).toEqual([]);
    for (const a of states.slice(0, 20)) {
      const used = await world.publicClient.readContract({
        address: world.tokenAddress,
        abi: tokenAbi,
        functionName: 'authorizationState',
        args: [a!.authorization!.from, a!.authorization!.nonce],
      });
      expect(used).toBe(false);
    }
    const result = await audit(world, ids, { caseName: 'expiry at scale', merchantTxBefore: before });
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
    expect(await world.publicClient.getTransactionCount({ address: world.merchant.address })).toBe(before);
  }, 1_200_000);
});
