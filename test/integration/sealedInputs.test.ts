// Every input the worker acts on is sealed by the payload codec. The outside probe's attacks, sent
// by a Temporal client without the codec key (plain JSON, as `nobody` did on the dev stack): a raw
// `relayRequest` to the merchant's relayer, a forged refunds workflow with a refund update, a forged
// webhook endpoint, a plain capture update and void signal to an authorization, a forged
// authorization workflow holding an order id. Each is refused and moves nothing, read from the chain.
// An operator's void sealed by the codec server (what the Temporal UI sends) still voids; the same
// operator seal on anything else is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowFailedError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { encodeFunctionData, type Address } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { relayerWorkflowId } from '../../domain/relay.js';
import { WEBHOOK_ENDPOINTS_WORKFLOW_ID } from '../../domain/events.js';
import { networkOfChainId } from '../../runtime/deployment/schema.js';
import { api, dev, newOrderId, payer, tokenBalance } from '../support/api.js';
import { connectTemporal, connectTemporalWithoutKeys } from '../support/temporal.js';
import { getAuthorization, sleep, stored, waitForState } from '../support/lifecycle.js';
import { expectNoMerchantTransactionFor, markMerchant } from '../support/sideEffects.js';
import { acceptedUpdates, historyEventTypes, operatorSealed, plainPayload, sendRawSignal } from '../support/forgedInputs.js';
import { capturedIn, sharedWorld } from '../support/refunds.js';

const p = payer(9);
let keyless: Client;
let operator: Client;
/** Where the attacker wants the money: a fresh address, so its balance can only be ours to explain. */
const attacker: Address = privateKeyToAccount(generatePrivateKey()).address;

beforeAll(async () => {
  keyless = await connectTemporalWithoutKeys();
  operator = await connectTemporal();
});
afterAll(async () => {
  await keyless?.connection.close();
  await operator?.connection.close();
});

const relayer = () => relayerWorkflowId(dev().merchantAddress, networkOfChainId(dev().chainId));
const workflowIdOf = (resource: { orderId: string }) => `authorization-${resource.orderId}`;

async function expectUpdateRefused(promise: Promise<unknown>, pattern = /not sealed|unsealed|plain payload|operator/i) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the update was accepted').toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (err as WorkflowUpdateFailedError).cause as { type?: string; message?: string };
  expect(cause?.type).toBe('unauthenticated_input');
  expect(cause?.message).toMatch(pattern);
}

describe('a client without the codec key', () => {
  it("cannot make the relayer send a raw transfer of the merchant's money (the probe's Critical finding)", async () => {
    // Make sure the relayer exists (a capture starts it), then send it what the probe sent.
    await capturedIn(sharedWorld(), p, '0.01');
    const mark = await markMerchant();
    const merchantBefore = await tokenBalance(dev().merchantAddress);
    const data = encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [attacker, 500_000n] });
    const raw = {
      requestId: `forged-${Date.now()}`,
      replyTo: { workflowId: 'x', runId: '00000000-0000-0000-0000-000000000000' },
      to: dev().tokenAddress,
      data,
      gas: '100000',
    };
    await sendRawSignal(keyless, relayer(), 'relayRequest', plainPayload(raw));
    // The typed shape, plain: refused all the same (it is not sealed).
    const typed = {
      requestId: `forged-typed-${Date.now()}`,
      replyTo: raw.replyTo,
      call: { kind: 'cancel', authorizer: attacker, nonce: `0x${'ab'.repeat(32)}`, signature: `0x${'11'.repeat(65)}` },
    };
    await sendRawSignal(keyless, relayer(), 'relayRequest', plainPayload(typed));
    // An operator's seal (the codec server's /encode) does not make it acceptable either.
    await sendRawSignal(keyless, relayer(), 'relayRequest', await operatorSealed(raw));
    await sleep(2_000);
    expect(await tokenBalance(attacker)).toBe(0n);
    await expectNoMerchantTransactionFor(mark, attacker);
    expect(await tokenBalance(dev().merchantAddress)).toBeGreaterThanOrEqual(merchantBefore);
  });

  it('cannot start a refunds workflow and have it pay an address of its choosing', async () => {
    const mark = await markMerchant();
    const workflowId = `refunds-forged-${Date.now()}`;
    const input = {
      authorizationRunId: '11111111-1111-1111-1111-111111111111',
      orderId: 'forged',
      payer: attacker,
      merchant: dev().merchantAddress,
      amountCapturedMinor: '1000000',
      capturedAt: new Date().toISOString(),
      refundableUntil: new Date(Date.now() + 86_400_000).toISOString(),
      authorization: { id: 'auth_forged', orderId: 'forged', state: 'captured', amount: '1', amountCaptured: '1', amountRefunded: '0' },
    };
    const handle = await keyless.workflow.start('refundsWorkflow', { workflowId, taskQueue: 'authcap', args: [input] });
    const failed = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(WorkflowFailedError);
    expect(((failed as WorkflowFailedError).cause as { type?: string }).type).toBe('unauthenticated_input');
    // Nothing ran: no activity, no timer, no memo, no signal: the start and its failure.
    const types = await historyEventTypes(operator, workflowId);
    expect(types).toContain('EVENT_TYPE_WORKFLOW_EXECUTION_FAILED');
    expect(types.some((t) => /ACTIVITY|TIMER|SIGNAL_EXTERNAL|PROPERTIES_MODIFIED|MARKER/.test(t))).toBe(false);
    expect(await tokenBalance(attacker)).toBe(0n);
    await expectNoMerchantTransactionFor(mark, attacker);
  });

  it('cannot refund a real captured authorization through its refunds workflow', async () => {
    const world = sharedWorld();
    const captured = await capturedIn(world, p, '0.02');
    // A real refund starts the real refunds workflow; then the forged update arrives.
    const first = await api('POST', `/v1/authorizations/${captured.id}/refunds`, { amount: '0.01' });
    expect([201, 202]).toContain(first.status);
    const runId = captured.id.split('.').pop()!;
    const workflowId = `refunds-${runId}`;
    const before = await historyEventTypes(operator, workflowId);
    const balance = await tokenBalance(p.address);
    const forged = keyless.workflow
      .getHandle(workflowId)
      .executeUpdate('refund', { args: [{ amountMinor: '10000', reason: 'forged', requestKey: 'k', requestFingerprint: 'f' }] });
    await expectUpdateRefused(forged);
    const after = await historyEventTypes(operator, workflowId);
    expect(acceptedUpdates(after)).toBe(acceptedUpdates(before));
    // Only the real refund's 0.01 (if it landed meanwhile) moved to the payer.
    expect((await tokenBalance(p.address)) - balance).toBeLessThanOrEqual(10_000n);
  });

  it('cannot register a webhook endpoint that would receive every event', async () => {
    // The registry exists once anything registered an endpoint.
    const created = await api('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['*'] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const before = await api('GET', '/v1/webhook_endpoints');
    const history = await historyEventTypes(operator, WEBHOOK_ENDPOINTS_WORKFLOW_ID);
    const forged = keyless.workflow.getHandle(WEBHOOK_ENDPOINTS_WORKFLOW_ID).executeUpdate('createWebhookEndpoint', {
      args: [{ id: 'we_forged', url: 'https://attacker.example/hook', events: ['*'], secret: 'whsec_forged', createdAt: new Date().toISOString() }],
    });
    await expectUpdateRefused(forged);
    expect((await api('GET', '/v1/webhook_endpoints')).body).toEqual(before.body);
    expect(await historyEventTypes(operator, WEBHOOK_ENDPOINTS_WORKFLOW_ID)).toEqual(history);
    await api('DELETE', `/v1/webhook_endpoints/${created.body.id}`);
  });

  it('cannot capture or void an authorization with plain updates and signals; the history does not grow with updates', async () => {
    const s = await stored(p, '0.03');
    const workflowId = workflowIdOf(s);
    const before = await historyEventTypes(operator, workflowId);
    await expectUpdateRefused(keyless.workflow.getHandle(workflowId).executeUpdate('capture', { args: [{}] }));
    await expectUpdateRefused(keyless.workflow.getHandle(workflowId).executeUpdate('void', { args: [{ reason: 'forged' }] }));
    expect(acceptedUpdates(await historyEventTypes(operator, workflowId))).toBe(acceptedUpdates(before));
    // A signal cannot be refused by the server: it is dropped by the workflow, which stays stored.
    await sendRawSignal(keyless, workflowId, 'void', plainPayload({ reason: 'forged', by: 'nobody' }));
    await sleep(1_500);
    expect((await getAuthorization(s.id)).state).toBe('stored');
  });

  it("cannot hold an order id with a forged authorization workflow: it fails at once and the merchant's create goes through", async () => {
    const orderId = newOrderId('forged-order');
    const handle = await keyless.workflow.start('authorizationWorkflow', {
      workflowId: `authorization-${orderId}`,
      taskQueue: 'authcap',
      args: [{ orderId, draft: { payer: p.address, value: '1' } }],
      memo: { view: { state: 'captured' } },
    });
    const failed = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(((failed as WorkflowFailedError).cause as { type?: string }).type).toBe('unauthenticated_input');
    const created = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '0.04' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.state).toBe('drafted');
  });
});

describe("an operator's void sealed by the codec server (what the Temporal UI sends)", () => {
  it('voids the authorization', async () => {
    const s = await stored(p, '0.05');
    await sendRawSignal(keyless, workflowIdOf(s), 'void', await operatorSealed({ orderId: s.orderId, reason: 'duplicate order', by: 'ops' }));
    const voided = await waitForState(s.id, 'voided');
    expect(voided.void).toMatchObject({ reason: 'duplicate order', by: 'ops' });
  });

  it("voids only the authorization it names: the same operator's void sent to another order is dropped", async () => {
    const named = await stored(p, '0.07');
    const other = await stored(p, '0.08');
    const sealed = await operatorSealed({ orderId: named.orderId, reason: 'duplicate order', by: 'ops' });
    // Sent first where it does not belong, then (a marker the test can wait on) where it does.
    await sendRawSignal(keyless, workflowIdOf(other), 'void', sealed);
    await sendRawSignal(keyless, workflowIdOf(other), 'void', await operatorSealed({ reason: 'names no order', by: 'ops' }));
    await sendRawSignal(keyless, workflowIdOf(named), 'void', sealed);
    await waitForState(named.id, 'voided');
    await sleep(1_000);
    expect((await getAuthorization(other.id)).state).toBe('stored');
  });

  it('cannot capture: an operator seal reaches only void', async () => {
    const s = await stored(p, '0.06');
    const workflowId = workflowIdOf(s);
    const before = await historyEventTypes(operator, workflowId);
    const sealed = await operatorSealed({});
    const update = keyless.workflowService.updateWorkflowExecution({
      namespace: keyless.options.namespace,
      workflowExecution: { workflowId },
      request: { meta: { updateId: `op-capture-${Date.now()}`, identity: 'forged-inputs-test' }, input: { name: 'capture', args: { payloads: [sealed] } } },
      waitPolicy: { lifecycleStage: 2 },
    });
    const outcome = await update;
    expect(outcome.outcome?.failure?.applicationFailureInfo?.type).toBe('unauthenticated_input');
    expect(acceptedUpdates(await historyEventTypes(operator, workflowId))).toBe(acceptedUpdates(before));
    expect((await getAuthorization(s.id)).state).toBe('stored');
  });
});
