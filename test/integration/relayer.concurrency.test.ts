// One merchant key, many concurrent captures, two worker processes: every capture lands, each
// under its own account nonce, none twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventLogs, type Hex } from 'viem';
import type { ManagedProcess } from '../../devstack/process.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, chain, dev, newOrderId, payer, walletSign } from '../support/api.js';
import { startWorkerProcess } from '../support/workerProcess.js';

const CAPTURES = 100;
// Payers 12..15 are this file's; 25 small authorizations each.
const PAYERS = [12, 13, 14, 15];

describe('the merchant relayer under concurrent captures from two worker processes', () => {
  let secondWorker: ManagedProcess;

  beforeAll(async () => {
    secondWorker = await startWorkerProcess(dev());
  }, 120_000);

  afterAll(async () => {
    await secondWorker?.stop();
  });

  it(`captures ${CAPTURES} authorizations at once with no nonce collision and no duplicate`, async () => {
    const merchant = dev().merchantAddress;
    const stored = await Promise.all(
      Array.from({ length: CAPTURES }, async (_, i) => {
        const p = payer(PAYERS[i % PAYERS.length]!);
        const created = await api('POST', '/v1/authorizations', { orderId: newOrderId('burst'), payer: p.address, amount: '0.01' });
        expect(created.status).toBe(201);
        const signed = await api('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: walletSign(created.body.typedData, p.privateKey) });
        expect(signed.status).toBe(200);
        return created.body;
      }),
    );
    const nonceBefore = await chain().getTransactionCount({ address: merchant, blockTag: 'latest' });

    const captured = await Promise.all(stored.map((a) => api('POST', `/v1/authorizations/${a.id}/capture`)));
    // Past the API's bounded wait a capture answers 202: follow those to the end.
    const finals = await Promise.all(
      captured.map(async (res, i) => {
        let body = res.body;
        for (let tries = 0; body.state === 'capturing' && tries < 300; tries++) {
          await new Promise((r) => setTimeout(r, 200));
          body = (await api('GET', `/v1/authorizations/${stored[i]!.id}`)).body;
        }
        return body;
      }),
    );

    const failed = finals.filter((f) => f.state !== 'captured').map((f) => `${f.state}: ${JSON.stringify(f.lastError)}`);
    if (failed.length) console.log('FAILED CAPTURES', failed.length, failed.slice(0, 5));
    expect(failed.slice(0, 5)).toEqual([]);
    expect(finals.map((f) => f.state)).toEqual(Array(CAPTURES).fill('captured'));
    expect(finals.every((f) => f.lastError === null)).toBe(true);
    const hashes = finals.map((f) => f.capture.transactionHash as Hex);
    expect(new Set(hashes).size).toBe(CAPTURES);

    // Every capture transaction is the merchant's, each under a distinct account nonce, all mined.
    const txs = await Promise.all(hashes.map((hash) => chain().getTransaction({ hash })));
    expect(txs.every((tx) => tx.from.toLowerCase() === merchant.toLowerCase())).toBe(true);
    expect(new Set(txs.map((tx) => tx.nonce)).size).toBe(CAPTURES);
    const nonceAfter = await chain().getTransactionCount({ address: merchant, blockTag: 'latest' });
    // Other test files capture concurrently, so at least ours; never fewer (no gap left behind).
    expect(nonceAfter - nonceBefore).toBeGreaterThanOrEqual(CAPTURES);

    // Exactly one AuthorizationUsed per nonce: nothing was submitted twice.
    const receipts = await Promise.all(hashes.map((hash) => chain().getTransactionReceipt({ hash })));
    const used = receipts.flatMap((r) => parseEventLogs({ abi: tokenAbi, logs: r.logs, eventName: 'AuthorizationUsed' }));
    expect(used).toHaveLength(CAPTURES);
    expect(new Set(used.map((l) => l.args.nonce)).size).toBe(CAPTURES);
    expect(new Set(stored.map((a) => a.authorization.nonce))).toEqual(new Set(used.map((l) => l.args.nonce)));
  }, 240_000);
});
