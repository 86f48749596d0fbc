// Captures that wait never starve the relayer: each capture's follower waits on the chain for its
// transaction, which the merchant's relayer sends from an activity of its own. With the followers on
// the worker's queue, as many waiting captures as activity slots took every slot, the relayer's
// activity never started, and every capture waited until its authorization expired. Here the worker
// has 4 activity slots and 12 captures arrive at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walletSign } from '../support/api.js';
import { startIsolatedChain, type IsolatedChain } from '../support/isolatedChain.js';

let chain: IsolatedChain;

beforeAll(async () => {
  chain = await startIsolatedChain({ env: { AUTHCAP_ACTIVITY_SLOTS: '4' } });
}, 180_000);

afterAll(async () => {
  await chain?.stop();
});

describe('more waiting captures than activity slots', () => {
  it('all capture, each once: the followers have slots of their own', async () => {
    const stored = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const payer = chain.payers[i % chain.payers.length]!;
        const created = await chain.client.authorizations.create({ orderId: `slots-${process.pid}-${Date.now()}-${i}`, payer: payer.address, amount: '0.25' });
        await chain.client.authorizations.sign(created.id, walletSign(created.typedData, payer.privateKey));
        return created;
      }),
    );
    const nonceBefore = await chain.publicClient.getTransactionCount({ address: chain.merchant.address });
    const outcomes = await Promise.all(stored.map((created) => chain.client.authorizations.capture(created.id, { waitMs: 60_000 })));
    for (const outcome of outcomes) expect(outcome.authorization.state).toBe('captured');
    expect(new Set(outcomes.map((o) => o.authorization.capture!.transactionHash)).size).toBe(12);
    expect((await chain.publicClient.getTransactionCount({ address: chain.merchant.address })) - nonceBefore).toBe(12);
  }, 120_000);
});
