// Case 9 (full run only): a soak of mixed traffic — drafts, signatures, captures, voids, payer
// cancellations — for AUTHCAP_SOAK_MINUTES (default 30), with a worker SIGKILLed every few minutes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from './audit.js';
import { FULL, eventually, kill, sleep, startWorld, type World } from './harness.js';
import { pool } from '../bench/stats.js';
import { createStored, sign } from './drive.js';

const MINUTES = Number(process.env.AUTHCAP_SOAK_MINUTES ?? 30);

describe.skipIf(!FULL)('soak', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ workers: 2, validitySeconds: 300 });
  }, 240_000);
  afterAll(() => world?.stop());

  it(
    `${MINUTES} minutes of mixed traffic with random worker kills`,
    async () => {
      const before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
      const ids: string[] = [];
      const until = Date.now() + MINUTES * 60_000;
      let nextKill = Date.now() + 60_000 + Math.random() * 120_000;
      let i = 0;
      const traffic = async () => {
        while (Date.now() < until) {
          i += 1;
          const n = i;
          try {
            const id = await createStored(world, n, '0.01', 120);
            ids.push(id);
            const pick = n % 5;
            if (pick <= 2) await world.client.authorizations.capture(id, { waitMs: 30_000 }).catch(() => undefined);
            else if (pick === 3) await world.client.authorizations.void(id, { reason: 'soak' }).catch(() => undefined);
            else {
              const a = await world.client.authorizations.get(id);
              if (a.cancellationTypedData)
                await world.client.authorizations
                  .cancel(id, sign(a.cancellationTypedData, world.payers[n % world.payers.length]!.privateKey))
                  .catch(() => undefined);
            }
          } catch {
            // a worker being killed: the next loop goes on; the audit judges the outcome
            await sleep(500);
          }
        }
      };
      const killer = async () => {
        while (Date.now() < until) {
          await sleep(1_000);
          if (Date.now() < nextKill) continue;
          nextKill = Date.now() + 120_000 + Math.random() * 120_000;
          await kill(world.workers[0]!);
          world.workers.shift();
          world.workers.push(await world.startWorker());
        }
      };
      await Promise.all([traffic(), traffic(), traffic(), killer()]);
      // Let every authorization reach its end (captures complete, the rest expire), watched the way
      // an order service would: a few at a time. Thousands of ids each polled every 250 ms at once (as
      // this did) pile abandoned calls up on the one connection until no read gets through in time.
      const settled = Date.now() + 400_000;
      await pool(ids, 16, (id) =>
        eventually(
          () => world.client.authorizations.get(id),
          (a) => ['captured', 'canceled', 'voided', 'expired'].includes(a.state),
          Math.max(1_000, settled - Date.now()),
        ),
      );
      const result = await audit(world, ids, { caseName: 'soak', merchantTxBefore: before });
      expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
      expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
    },
    (MINUTES + 15) * 60_000,
  );
});
