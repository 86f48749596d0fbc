// The relayer's check that a refund is backed by its capture reads the capture's receipt. A node that
// does not answer is no verdict: the check fails (the step is retried), never refuses — a refusal
// fails the refund for good. Found by the fault suite: a refund under 503s and dropped connections
// ended `failed` with "no capture … in transaction …" for a capture that was there.
import { describe, expect, it } from 'vitest';
import { HttpRequestError, TransactionReceiptNotFoundError, zeroAddress, type Address, type Hex } from 'viem';
import { refundBackingCheck } from '../../../activities/relayCalls.js';
import type { ChainContext } from '../../../activities/chainContext.js';
import { refundNonce } from '../../../activities/refundNonce.js';

const merchant = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as Address;
const payer = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' as Address;
const captureHash = `0x${'ab'.repeat(32)}` as Hex;

function contextWith(getTransactionReceipt: () => Promise<unknown>): ChainContext {
  return { publicClient: { getTransactionReceipt }, tokenAddress: zeroAddress, isMerchant: () => true } as unknown as ChainContext;
}

const refund = {
  authorization: { from: merchant, to: payer, value: '1000', validAfter: '0', validBefore: '9999999999', nonce: refundNonce('run-1', 1) },
  refund: { authorizationRunId: 'run-1', sequence: 1, captureTransactionHash: captureHash },
};

describe('a refund backed by its capture', () => {
  it('a node that did not answer: the check throws (retried), it does not refuse', async () => {
    const check = refundBackingCheck(
      contextWith(async () => {
        throw new HttpRequestError({ url: 'http://127.0.0.1:1', status: 503, details: 'injected: Service Unavailable' });
      }),
    );
    await expect(check.check(merchant, refund as never)).rejects.toThrow(/503|Service Unavailable|HTTP request failed/);
  });

  it('an unanswered read is not kept: once the node answers, the same capture backs the refund', async () => {
    let answers = 0;
    const receipt = {
      status: 'success',
      logs: [] as unknown[],
    };
    const check = refundBackingCheck(
      contextWith(async () => {
        answers += 1;
        if (answers === 1) throw new HttpRequestError({ url: 'http://127.0.0.1:1', status: 503, details: 'injected' });
        return receipt;
      }),
    );
    await expect(check.check(merchant, refund as never)).rejects.toThrow();
    // Asked again (not the first failure remembered): the receipt is read, and says no capture log.
    expect(await check.check(merchant, refund as never)).toMatch(/no capture by/);
    expect(answers).toBe(2);
  });

  it('a capture not mined: refused, naming the transaction', async () => {
    const check = refundBackingCheck(
      contextWith(async () => {
        throw new TransactionReceiptNotFoundError({ hash: captureHash });
      }),
    );
    expect(await check.check(merchant, refund as never)).toMatch(new RegExp(`no capture by ${merchant} in transaction ${captureHash}`));
  });
});
