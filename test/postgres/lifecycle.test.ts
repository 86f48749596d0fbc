// The product on the production shape: every lifecycle path, the one-payment-one-order claim, the
// events feed and webhooks, and the operator CLI, through two API processes and two workers on the
// Temporal server with PostgreSQL persistence and SQL visibility.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { verifyWebhook } from '../../runtime/webhookSignature.js';
import { clientTlsEnv, connectionTls, issueClientCertificate, tlsEnvFor, type TemporalTls } from '../../devstack/temporalTls.js';
import { startReceiver, type Receiver } from '../support/webhookReceiver.js';
import { audit } from '../faults/audit.js';
import { sign } from '../faults/drive.js';
import { eventually, type World } from '../faults/harness.js';
import { call, newOrder, startProductionWorld, storedViaApi } from './world.js';

const run = promisify(execFile);

describe('the lifecycle on the Temporal server with PostgreSQL', () => {
  let world: World;
  let tls: TemporalTls;
  let receiver: Receiver;
  let before = 0;
  const ids: string[] = [];
  beforeAll(async () => {
    world = await startProductionWorld();
    tls = world.cluster!.tls;
    receiver = await startReceiver();
    before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
  }, 300_000);
  afterAll(async () => {
    await receiver?.close();
    await world?.stop();
  });

  it('captures through either API process, and both read the same authorization', async () => {
    for (const api of [0, 1]) {
      const { id } = await storedViaApi(world, api);
      ids.push(id);
      const captured = await call(world, 'POST', `/v1/authorizations/${id}/capture`, {}, { api });
      expect([200, 202]).toContain(captured.status);
      const final = await eventually(
        () => call(world, 'GET', `/v1/authorizations/${id}`, undefined, { api: 1 - api }),
        (r) => r.body.state === 'captured',
        60_000,
      );
      expect(final.body).toMatchObject({ id, state: 'captured', capture: { by: 'authcap' } });
      expect(final.body.capture.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    }
  });

  it('voids a stored authorization and lets the payer cancel one, with nothing captured', async () => {
    const voided = await storedViaApi(world, 2);
    ids.push(voided.id);
    const v = await call(world, 'POST', `/v1/authorizations/${voided.id}/void`, { reason: 'out of stock' });
    expect(v.status).toBe(200);
    expect(v.body.state).toBe('voided');

    const canceled = await storedViaApi(world, 3);
    ids.push(canceled.id);
    const read = await call(world, 'GET', `/v1/authorizations/${canceled.id}`);
    const payer = world.payers[3]!;
    const c = await call(world, 'POST', `/v1/authorizations/${canceled.id}/cancel`, {
      signature: sign(read.body.cancellationTypedData, payer.privateKey as Hex),
    });
    expect([200, 202]).toContain(c.status);
    const final = await eventually(
      () => call(world, 'GET', `/v1/authorizations/${canceled.id}`),
      (r) => r.body.state === 'canceled',
      60_000,
    );
    expect(final.body.state).toBe('canceled');
  });

  it('keeps one payment per order: a second open attempt is refused, and so is a new one once captured', async () => {
    const orderId = newOrder('claim');
    const payer = world.payers[4]!;
    const first = await call(world, 'POST', '/v1/authorizations', { orderId, payer: payer.address, amount: '0.02' }, { api: 0 });
    expect(first.status).toBe(201);
    ids.push(first.body.id);
    const second = await call(world, 'POST', '/v1/authorizations', { orderId, payer: payer.address, amount: '0.02' }, { api: 1 });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('order_has_open_authorization');
    await call(world, 'POST', `/v1/authorizations/${first.body.id}/signature`, { signature: sign(first.body.typedData, payer.privateKey as Hex) });
    await call(world, 'POST', `/v1/authorizations/${first.body.id}/capture`, {});
    await eventually(
      () => call(world, 'GET', `/v1/authorizations/${first.body.id}`),
      (r) => r.body.state === 'captured',
      60_000,
    );
    const third = await call(world, 'POST', '/v1/authorizations', { orderId, payer: payer.address, amount: '0.02' }, { api: 1 });
    expect(third.status).toBe(409);
    expect(third.body.error.code).toBe('order_already_captured');
  });

  it('delivers webhooks and serves the events feed from SQL visibility', async () => {
    const endpoint = await call(world, 'POST', '/v1/webhook_endpoints', { url: receiver.url, events: ['*'] });
    expect(endpoint.status).toBe(201);
    const { id, orderId } = await storedViaApi(world, 5);
    ids.push(id);
    await call(world, 'POST', `/v1/authorizations/${id}/capture`, {});
    const received = await eventually(
      async () => receiver.accepted((e) => e.orderId === orderId),
      (got) => got.at(-1)?.type === 'authorization.captured',
      60_000,
    );
    const types = [...new Map(received.map((e) => [e.id, e.type])).values()];
    expect(types[0]).toBe('authorization.drafted');
    expect(types[1]).toBe('authorization.stored');
    expect(types.at(-1)).toBe('authorization.captured');
    const delivery = receiver.deliveries.find((d) => received.some((e) => e.id === d.eventId))!;
    expect(verifyWebhook(delivery.body, delivery.headers['authcap-signature'], endpoint.body.secret).id).toBe(delivery.eventId);
    // The feed finds the workflows' events through visibility: it catches up within seconds.
    const feed = await eventually(
      () => call(world, 'GET', `/v1/events?orderId=${encodeURIComponent(orderId)}&limit=100`),
      (r) => r.body.data?.length === types.length,
      30_000,
    );
    expect(feed.body.data.map((e: { type: string }) => e.type)).toEqual(types);
    const listed = await eventually(
      () => call(world, 'GET', `/v1/authorizations?orderId=${encodeURIComponent(orderId)}`),
      (r) => r.body.data?.[0]?.state === 'captured',
      30_000,
    );
    expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual([id]);
  });

  it('captures for less and refunds through either API; a refunded authorization is found in SQL visibility', async () => {
    const { id, orderId } = await storedViaApi(world, 6, '0.05');
    ids.push(id);
    const capture = await call(world, 'POST', `/v1/authorizations/${id}/capture`, { amount: '0.04' }, { api: 0 });
    expect([200, 202]).toContain(capture.status);
    const captured = await eventually(
      () => call(world, 'GET', `/v1/authorizations/${id}`, undefined, { api: 1 }),
      (r) => r.body.state === 'captured',
      60_000,
    );
    expect(captured.body).toMatchObject({ amount: '0.05', amountCaptured: '0.04', amountRefunded: '0', capture: { amount: '0.04' } });
    // The same key through both APIs is one refund; "the rest" then takes what is left, and nothing more fits.
    const key = `pg-refund-${orderId}`;
    const answers = await Promise.all(
      [0, 1].map((api) => call(world, 'POST', `/v1/authorizations/${id}/refunds`, { amount: '0.01', reason: 'returned' }, { api, idempotencyKey: key })),
    );
    // Both at once: one gets the refund, the other the same one (or 409 while the first is in progress).
    expect(answers.every((r) => r.status === 201 || r.status === 202 || r.status === 409)).toBe(true);
    const refundId = answers.find((r) => r.status !== 409)!.body.id as string;
    const rest = await call(world, 'POST', `/v1/authorizations/${id}/refunds`, {}, { api: 1 });
    expect([201, 202]).toContain(rest.status);
    const done = await eventually(
      () => call(world, 'GET', `/v1/authorizations/${id}/refunds`, undefined, { api: 0 }),
      (r) => r.body.data?.length === 3 && r.body.data.every((x: { state: string }) => x.state === 'succeeded'),
      60_000,
    );
    expect(done.body.data.map((x: { reason: string | null; amount: string }) => [x.reason, x.amount])).toEqual([
      ['partial_capture', '0.01'],
      ['returned', '0.01'],
      [null, '0.03'],
    ]);
    expect(done.body.data[1].id).toBe(refundId);
    const third = await call(world, 'POST', `/v1/authorizations/${id}/refunds`, { amount: '0.000001' });
    expect(third.status).toBe(422);
    expect(third.body.error.code).toBe('refund_exceeds_captured');
    const read = await call(world, 'GET', `/v1/authorizations/${id}`);
    expect(read.body).toMatchObject({ amountCaptured: '0.04', amountRefunded: '0.04' });
    // Operators find refunded authorizations by the refunds workflow's search attributes (SQL visibility).
    const connection = await Connection.connect({ address: world.temporal.address, tls: connectionTls(tls, tls.clients.cli) });
    try {
      const temporal = new Client({ connection, namespace: world.temporal.namespace });
      const query = `WorkflowType = 'refundsWorkflow' AND OrderId = '${orderId}' AND AmountRefundedMinor = 40000 AND RefundStates = 'succeeded'`;
      const found = await eventually(
        () => temporal.workflow.count(query),
        (c) => c.count === 1,
        30_000,
      );
      expect(found.count).toBe(1);
    } finally {
      await connection.close();
    }
  });

  it("answers the operator CLI's list and history", async () => {
    const env = {
      ...process.env,
      TEMPORAL_ADDRESS: world.temporal.address,
      TEMPORAL_NAMESPACE: world.temporal.namespace,
      ...clientTlsEnv(tls, 'cli'),
      AUTHCAP_KEYS_FILE: `${world.stateDir}/api-keys.json`,
    };
    const cli = (args: string[]) => run(process.execPath, ['bin/authcap.mjs', ...args], { env, timeout: 30_000 });
    const listed = async () =>
      JSON.parse((await cli(['list', '--state', 'captured', '--limit', '100', '--json'])).stdout) as { data: { id: string; state: string }[] };
    const list = await eventually(listed, (page) => ids.slice(0, 2).every((id) => page.data.some((a) => a.id === id)), 30_000);
    expect(list.data.every((a) => a.state === 'captured')).toBe(true);
    const history = await cli(['history', ids[0]!]);
    expect(history.stdout).toMatch(/stored/);
    expect(history.stdout).toMatch(/captured/);
  });

  it('temporal-setup finds what the stack registered and changes nothing; a new namespace takes a certificate with admin on it', async () => {
    const env = { ...process.env, TEMPORAL_ADDRESS: world.temporal.address, TEMPORAL_NAMESPACE: world.temporal.namespace, ...clientTlsEnv(tls, 'setup') };
    const { stdout } = await run(process.execPath, ['bin/authcap.mjs', 'temporal-setup', '--json'], { env, timeout: 60_000 });
    expect(JSON.parse(stdout)).toEqual({ namespace: 'authcap', namespaceCreated: false, searchAttributesAdded: [] });
    // A namespace that does not exist yet: the operator CLI's certificate may not register it...
    const fresh = `authcap-setup-${process.pid}`;
    const setupFresh = (more: Record<string, string>) =>
      run(process.execPath, ['bin/authcap.mjs', 'temporal-setup', '--json', '--retention-days', '3'], {
        env: { ...env, TEMPORAL_NAMESPACE: fresh, ...more },
        timeout: 120_000,
      });
    const refused = await setupFresh(clientTlsEnv(tls, 'cli')).catch((e) => e);
    expect(refused.code).not.toBe(0);
    expect(`${refused.stdout}${refused.stderr}`).toMatch(/unauthorized|permission/i);
    // ...a certificate with admin on it does, with its attributes, ready to use.
    const freshAdmin = await issueClientCertificate(tls, `setup-${fresh}`, [`${fresh}:admin`]);
    const made = await setupFresh(tlsEnvFor(tls, freshAdmin));
    expect(JSON.parse(made.stdout)).toMatchObject({
      namespace: fresh,
      namespaceCreated: true,
      searchAttributesAdded: expect.arrayContaining(['OrderId', 'AuthorizationState', 'EventTypes']),
    });
    const bad = await run(process.execPath, ['bin/authcap.mjs', 'temporal-setup', '--retention-days', 'soon'], { env, timeout: 30_000 }).catch((e) => e);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toContain('error validation_error: --retention-days');
  });

  it('ends with the audit: nothing lost, nothing twice, nothing stuck, no nonce gap', async () => {
    const result = await audit(world, ids, { caseName: 'postgres lifecycle', merchantTxBefore: before });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
  });
});
