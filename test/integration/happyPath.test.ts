import { describe, expect, it } from 'vitest';
import { parseEventLogs } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, chain, dev, newOrderId, payer, tokenBalance, walletSign } from '../support/api.js';

describe('authorize → capture through the HTTP API on real Temporal and anvil', () => {
  it('drafts, stores a wallet signature, captures exactly once onchain', async () => {
    const p = payer(0);
    const created = await api('POST', '/v1/authorizations', { orderId: newOrderId(), payer: p.address, amount: '12.345678' });
    expect(created.status).toBe(201);
    expect(created.body.state).toBe('drafted');
    expect(created.body.authorization.value).toBe('12345678');
    expect(created.body.authorization.to).toBe(dev().merchantAddress);
    expect(created.body.typedData.primaryType).toBe('ReceiveWithAuthorization');
    expect(created.body.typedData.types.EIP712Domain).toBeDefined();
    expect(created.body).not.toHaveProperty('signature');

    const signature = walletSign(created.body.typedData, p.privateKey);
    const stored = await api('POST', `/v1/authorizations/${created.body.id}/signature`, { signature });
    expect(stored.status).toBe(200);
    expect(stored.body.state).toBe('stored');
    expect(JSON.stringify(stored.body)).not.toContain(signature.slice(2));

    const payerBefore = await tokenBalance(p.address);
    const captured = await api('POST', `/v1/authorizations/${created.body.id}/capture`);
    expect(captured.status).toBe(200);
    expect(captured.body.state).toBe('captured');
    expect(captured.body.capture.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Number(captured.body.capture.blockNumber)).toBeGreaterThan(0);
    // Preconfirmed (log in the pending view) strictly before captured (a block on top of it).
    const { submittedAt, preconfirmedAt, confirmedAt } = captured.body.capture;
    expect(Date.parse(submittedAt)).toBeLessThanOrEqual(Date.parse(preconfirmedAt));
    expect(Date.parse(preconfirmedAt)).toBeLessThan(Date.parse(confirmedAt));
    expect(await chain().getBlockNumber()).toBeGreaterThan(BigInt(captured.body.capture.blockNumber));
    expect(captured.body.history.map((h: { state: string }) => h.state)).toEqual(['drafting', 'drafted', 'stored', 'capturing', 'captured']);

    // This payer is this file's alone, so its balance is exact. The merchant is shared with files
    // capturing in parallel: its credit is read from this capture's own Transfer log instead.
    expect(await tokenBalance(p.address)).toBe(payerBefore - 12_345_678n);
    const { nonce } = created.body.authorization;
    expect(await chain().readContract({ address: dev().tokenAddress, abi: tokenAbi, functionName: 'authorizationState', args: [p.address, nonce] })).toBe(true);
    const receipt = await chain().getTransactionReceipt({ hash: captured.body.capture.transactionHash });
    const used = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'AuthorizationUsed' });
    expect(used).toHaveLength(1);
    expect(used[0]!.args).toEqual({ authorizer: p.address, nonce });
    const transfers = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'Transfer' });
    expect(transfers.map((t) => t.args)).toEqual([{ from: p.address, to: dev().merchantAddress, value: 12_345_678n }]);
    expect(used[0]!.logIndex).toBeLessThan(transfers[0]!.logIndex);

    const fetched = await api('GET', `/v1/authorizations/${created.body.id}`);
    expect(fetched.body.state).toBe('captured');
    expect(fetched.body.typedData).toBeNull();
  });
});
