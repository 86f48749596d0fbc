// A settled x402 payment is an authorization like any other: listed by payer, found in Temporal's
// visibility by Payer, Network and Resource (what the Temporal UI searches), with its events in the
// feed, refundable through the refunds API, and counted in the API's metrics. The facilitator key
// itself can do none of that: it verifies and settles, and nothing else.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { authorizationTypes } from '../../domain/eip3009.js';
import { api, dev, tokenBalance } from '../support/api.js';
import { mintTokens } from '../support/contractWallet.js';
import { tokenDomain } from '../support/lifecycle.js';
import { connectTemporal } from '../support/temporal.js';

const facilitator = () => ({ key: dev().facilitatorApiKey });
const network = () => `eip155:${dev().chainId}`;

async function settleOne(amount: bigint, resource: string) {
  const payer = privateKeyToAccount(generatePrivateKey());
  await mintTokens(payer.address, amount);
  const domain = await tokenDomain();
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: payer.address,
    to: dev().merchantAddress as Address,
    value: amount.toString(),
    validAfter: '0',
    validBefore: String(now + 60),
    nonce: toHex(randomBytes(32)) as Hex,
  };
  const signature = await payer.signTypedData({
    domain,
    types: { TransferWithAuthorization: authorizationTypes.TransferWithAuthorization },
    primaryType: 'TransferWithAuthorization',
    message: { ...authorization, value: amount, validAfter: 0n, validBefore: BigInt(now + 60) },
  });
  const requirements = {
    scheme: 'exact',
    network: network(),
    asset: dev().tokenAddress,
    amount: amount.toString(),
    payTo: dev().merchantAddress,
    maxTimeoutSeconds: 60,
    extra: { name: domain.name, version: domain.version },
  };
  const body = {
    x402Version: 2,
    paymentPayload: { x402Version: 2, resource: { url: resource }, accepted: requirements, payload: { authorization, signature } },
    paymentRequirements: requirements,
  };
  const settled = await api('POST', '/x402/settle', body, facilitator());
  expect(settled.body, JSON.stringify(settled.body)).toMatchObject({ success: true, payer: payer.address });
  return { payer, transaction: settled.body.transaction as Hex };
}

describe('an x402 payment is an authorization like the others', () => {
  it('listed, searchable by Payer, Network and Resource, in the events feed, refundable, counted', async () => {
    const resource = `https://shop.example/reports/${Date.now()}`;
    const { payer, transaction } = await settleOne(30_000n, resource);

    const listed = await api('GET', `/v1/authorizations?payer=${payer.address}`);
    expect(listed.body.data).toHaveLength(1);
    const summary = listed.body.data[0];
    expect(summary).toMatchObject({ network: network(), amountMinor: '30000' });
    // The settle answers once the transfer is in a block; the record follows it to the confirmation depth.
    const authorization = (await api('GET', `/v1/authorizations/${summary.id}?wait=20&state=capturing`)).body;
    expect(authorization).toMatchObject({ state: 'captured', capture: { transactionHash: transaction, by: 'authcap' } });

    // What an operator types into the Temporal UI's search.
    const temporal = await connectTemporal();
    const query = `Resource = "${resource}" AND Payer = "${payer.address}" AND Network = "${network()}"`;
    await expect
      .poll(
        async () => {
          const found: string[] = [];
          for await (const run of temporal.workflow.list({ query })) found.push(run.workflowId);
          return found.length;
        },
        { timeout: 15_000 },
      )
      .toBe(1);

    // The feed reads Temporal's visibility, which follows the workflow by a moment.
    await expect
      .poll(
        async () => {
          const events = await api('GET', `/v1/events?orderId=${encodeURIComponent(authorization.orderId)}`);
          expect(events.status, JSON.stringify(events.body)).toBe(200);
          return events.body.data.map((e: { type: string }) => e.type);
        },
        { timeout: 15_000 },
      )
      .toEqual(expect.arrayContaining(['authorization.stored', 'authorization.captured']));

    const refund = await api('POST', `/v1/authorizations/${summary.id}/refunds`, { amount: '0.01', reason: 'x402 resource not delivered' });
    expect(refund.status, JSON.stringify(refund.body)).toBe(201);
    expect(refund.body.state).toBe('succeeded');
    expect(await tokenBalance(payer.address)).toBe(10_000n);

    const metrics = await api('GET', '/metrics');
    const settledCount = /authcap_x402_requests_total\{route="settle",outcome="settled"\} (\d+)/.exec(String(metrics.body));
    expect(Number(settledCount?.[1] ?? 0)).toBeGreaterThanOrEqual(1);
  }, 90_000);

  it('the facilitator key verifies and settles, and nothing else; other keys cannot settle', async () => {
    expect((await api('GET', '/v1/authorizations', undefined, facilitator())).status).toBe(403);
    expect((await api('POST', '/v1/authorizations', { orderId: 'x', payer: dev().merchantAddress, amount: '1' }, facilitator())).status).toBe(403);
    expect((await api('GET', '/metrics', undefined, facilitator())).status).toBe(403);
    expect((await api('GET', '/x402/supported')).status).toBe(403);
    expect((await api('POST', '/x402/settle', {}, { key: dev().operatorApiKey })).status).toBe(403);
    expect((await api('GET', '/x402/supported', undefined, { key: null })).status).toBe(401);
    // Not a facilitator request at all: a plain API error, nothing started.
    const malformed = await api('POST', '/x402/settle', { hello: 'world' }, facilitator());
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('validation_error');
  });
});
