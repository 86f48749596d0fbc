// Several merchant keys (MERCHANT_PRIVATE_KEYS): new authorizations are spread over the keys, each
// capture is sent by the key it pays (receiveWithAuthorization accepts only its payee), every key
// has its own relayer and nonce sequence, and each capture still happens exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseEther, type Hex } from 'viem';
import { relayerWorkflowId } from '../../domain/relay.js';
import { walletSign } from '../support/api.js';
import { startIsolatedChain, type IsolatedChain } from '../support/isolatedChain.js';
import { connectTemporal } from '../support/temporal.js';

let chain: IsolatedChain;
const extraKeys: Hex[] = [generatePrivateKey(), generatePrivateKey()];
const extra = extraKeys.map((k) => privateKeyToAccount(k).address);

beforeAll(async () => {
  chain = await startIsolatedChain({ env: { MERCHANT_PRIVATE_KEYS: extraKeys.join(',') } });
  for (const address of extra) await chain.testClient.setBalance({ address, value: parseEther('10') });
}, 180_000);

afterAll(async () => {
  await chain?.stop();
});

describe('several merchant keys', () => {
  it('spreads authorizations over the keys; each capture is sent by its payee, once', async () => {
    const keys = [chain.merchant.address, ...extra];
    const noncesBefore = await Promise.all(keys.map((address) => chain.publicClient.getTransactionCount({ address })));
    const runs = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const payer = chain.payers[i % chain.payers.length]!;
        const created = await chain.client.authorizations.create({ orderId: `keys-${process.pid}-${Date.now()}-${i}`, payer: payer.address, amount: '0.5' });
        await chain.client.authorizations.sign(created.id, walletSign(created.typedData, payer.privateKey));
        const outcome = await chain.client.authorizations.capture(created.id, { waitMs: 60_000 });
        return { created, outcome };
      }),
    );
    const payees = runs.map((r) => r.created.authorization!.to.toLowerCase());
    // Round robin: every key pays (and captures) two of the six.
    for (const key of keys)
      expect(
        payees.filter((p) => p === key.toLowerCase()),
        key,
      ).toHaveLength(2);
    for (const { created, outcome } of runs) {
      expect(outcome.authorization.state).toBe('captured');
      const tx = await chain.publicClient.getTransaction({ hash: outcome.authorization.capture!.transactionHash });
      expect(tx.from.toLowerCase()).toBe(created.authorization!.to.toLowerCase());
    }
    const noncesAfter = await Promise.all(keys.map((address) => chain.publicClient.getTransactionCount({ address })));
    expect(noncesAfter.map((n, i) => n - noncesBefore[i]!)).toEqual([2, 2, 2]);
    // One relayer per key.
    const temporal = await connectTemporal();
    try {
      for (const key of keys) expect((await temporal.workflow.getHandle(relayerWorkflowId(key, chain.network)).describe()).status.name).toBe('RUNNING');
    } finally {
      await temporal.connection.close();
    }
  }, 120_000);
});
