// Reconciliation: the nonce can be consumed outside authcap. The payer may cancel through someone
// else's relayer, and a TransferWithAuthorization can be settled by anyone who sees it. The workflow
// re-reads the chain (every 2 s in tests) and ends in the true final state BY ITSELF, recording the
// outside transaction with `by: 'onchain'`; authcap never sends a second transaction for that nonce.
import { describe, expect, it } from 'vitest';
import { parseEventLogs, type Hex } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, dev, newOrderId, payer, tokenBalance, walletSign } from '../support/api.js';
import { expectNoMerchantTransactionFor, markMerchant } from '../support/sideEffects.js';
import {
  asTokenOwner,
  authorizationMessage,
  authorizationState,
  ethersSign,
  expectMerchantCredited,
  historyStates,
  nonceLogs,
  stored,
  draft,
  tokenDomain,
  waitForState,
  type AuthorizationMessage,
  type DemoKey,
} from '../support/lifecycle.js';

const token = () => ({ address: dev().tokenAddress, abi: tokenAbi }) as const;

/** A pre-signed TransferWithAuthorization stored through the API; returns the resource and its signature. */
async function storedTransfer(p: DemoKey, value: bigint) {
  const domain = await tokenDomain();
  const authorization = authorizationMessage(p.address, value);
  const signature = await ethersSign('TransferWithAuthorization', domain, authorization, p.privateKey);
  const res = await api('POST', '/v1/authorizations', {
    orderId: newOrderId('lc-reconcile'),
    primaryType: 'TransferWithAuthorization',
    authorization,
    signature,
    domain,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.state).toBe('stored');
  return { resource: res.body, authorization, signature };
}

/** Someone other than the merchant settles the TransferWithAuthorization onchain (bytes overload). */
function settleElsewhere(a: AuthorizationMessage, signature: Hex) {
  return asTokenOwner((w) =>
    w.writeContract({
      ...token(),
      functionName: 'transferWithAuthorization',
      args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, signature],
    }),
  );
}

describe('the workflow notices outside consumption of its nonce and settles by itself', () => {
  it('payer cancels elsewhere (cancelAuthorization relayed by someone else) → canceled, by onchain', async () => {
    const p = payer(10);
    const mark = await markMerchant();
    const balance = await tokenBalance(p.address);
    const s = await stored(p, '11');
    const { nonce } = s.authorization;

    const cancelSignature = walletSign(s.cancellationTypedData, p.privateKey);
    const receipt = await asTokenOwner((w) =>
      w.writeContract({
        ...token(),
        functionName: 'cancelAuthorization',
        args: [p.address, nonce, cancelSignature],
      }),
    );
    const logs = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'AuthorizationCanceled' });
    expect(logs.map((l) => l.args)).toEqual([{ authorizer: p.address, nonce }]);

    // No API call: the workflow finds out on its own.
    const canceled = await waitForState(s.id, 'canceled', 20_000);
    expect(canceled.cancellation).toMatchObject({ by: 'onchain', transactionHash: receipt.transactionHash });
    expect(canceled.cancellation.blockNumber).toBe(receipt.blockNumber.toString());
    expect(canceled.capture).toBeNull();
    expect(historyStates(canceled)).toEqual(['drafting', 'drafted', 'stored', 'canceled']);

    expect(await authorizationState(p.address, nonce)).toBe(true);
    expect(await tokenBalance(p.address)).toBe(balance);
    await expectNoMerchantTransactionFor(mark, p.address);
    const capture = await api('POST', `/v1/authorizations/${s.id}/capture`);
    expect(capture.status).toBe(409);
    expect(capture.body.error.code).toBe('invalid_state');
  });

  it('a drafted (never stored) authorization whose nonce the payer cancels elsewhere → canceled, by onchain', async () => {
    const p = payer(10);
    const d = await draft(p, '4');
    const { nonce } = d.authorization;
    // The payer signs a CancelAuthorization for the drafted nonce with their wallet, and a relayer submits it.
    const cancelTypedData = {
      domain: d.typedData.domain,
      primaryType: 'CancelAuthorization',
      types: {
        EIP712Domain: d.typedData.types.EIP712Domain,
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      message: { authorizer: p.address, nonce },
    };
    const receipt = await asTokenOwner((w) =>
      w.writeContract({
        ...token(),
        functionName: 'cancelAuthorization',
        args: [p.address, nonce, walletSign(cancelTypedData, p.privateKey)],
      }),
    );
    const canceled = await waitForState(d.id, 'canceled', 20_000);
    expect(canceled.cancellation).toMatchObject({ by: 'onchain', transactionHash: receipt.transactionHash });
    expect(canceled.typedData).toBeNull();
    expect(historyStates(canceled)).toEqual(['drafting', 'drafted', 'canceled']);
    // A signature arriving now cannot store a dead authorization.
    const late = await api('POST', `/v1/authorizations/${d.id}/signature`, { signature: walletSign(d.typedData, p.privateKey) });
    expect({ status: late.status, code: late.body.error?.code }).toEqual({ status: 409, code: 'invalid_state' });
  });

  it('a pre-signed TransferWithAuthorization settled by someone else → captured, by onchain, no merchant tx', async () => {
    const p = payer(11);
    const value = 13_000_000n;
    const mark = await markMerchant();
    const { resource, authorization, signature } = await storedTransfer(p, value);
    expect(resource.primaryType).toBe('TransferWithAuthorization');
    const balance = await tokenBalance(p.address);

    const receipt = await settleElsewhere(authorization, signature);
    expect(await tokenBalance(p.address)).toBe(balance - value);
    await expectMerchantCredited(receipt, p.address, value);

    const captured = await waitForState(resource.id, 'captured', 20_000);
    expect(captured.capture).toMatchObject({ by: 'onchain', transactionHash: receipt.transactionHash });
    expect(captured.capture.blockNumber).toBe(receipt.blockNumber.toString());
    expect(captured.capture.blockHash).toBe(receipt.blockHash);
    expect(captured.capture.submittedAt).toBeNull();
    expect(historyStates(captured)).toEqual(['drafting', 'stored', 'captured']);

    // Exactly one use of the nonce, and the merchant never sent anything for this payer.
    const logs = await nonceLogs(p.address, authorization.nonce);
    expect(logs.used.map((l) => l.transactionHash)).toEqual([receipt.transactionHash]);
    expect(logs.canceled).toEqual([]);
    await expectNoMerchantTransactionFor(mark, p.address);
    expect(await tokenBalance(p.address)).toBe(balance - value);
  });

  it('an explicit capture of an authorization already consumed onchain reports the truth and never sends a second tx', async () => {
    const p = payer(12);
    const value = 2_000_000n;
    const mark = await markMerchant();
    const { resource, authorization, signature } = await storedTransfer(p, value);
    const balance = await tokenBalance(p.address);

    const receipt = await settleElsewhere(authorization, signature);
    // Capture right away, most likely before the 2 s reconcile tick has seen it.
    const res = await api('POST', `/v1/authorizations/${resource.id}/capture`);
    if (res.status === 200) {
      expect(res.body.state).toBe('captured');
      expect(res.body.capture).toMatchObject({ by: 'onchain', transactionHash: receipt.transactionHash });
    } else {
      expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
      expect(['nonce_already_used', 'invalid_state']).toContain(res.body.error.code);
    }

    const captured = await waitForState(resource.id, 'captured', 20_000);
    expect(captured.capture).toMatchObject({ by: 'onchain', transactionHash: receipt.transactionHash });
    await expectNoMerchantTransactionFor(mark, p.address);
    const logs = await nonceLogs(p.address, authorization.nonce);
    expect(logs.used).toHaveLength(1);
    expect(logs.used[0]!.transactionHash).toBe(receipt.transactionHash);
    expect(await tokenBalance(p.address)).toBe(balance - value);

    // Asking again after it settled answers where it stands (captured, 200), still with nothing sent:
    // a capture retried after a timeout must not look like a failure.
    const again = await api('POST', `/v1/authorizations/${resource.id}/capture`);
    expect({ status: again.status, state: again.body.state }).toEqual({ status: 200, state: 'captured' });
    expect((await nonceLogs(p.address, authorization.nonce)).used).toHaveLength(1);
  });
});
