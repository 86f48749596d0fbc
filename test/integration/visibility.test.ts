// Operators find an authorization the way the Temporal UI does: a visibility query by order id. The
// search attributes follow the lifecycle as the API drives it, and the `status` query agrees with GET.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { AuthorizationView } from '../../domain/authorization.js';
import { asResource } from '../../domain/captures.js';
import { parseResourceId } from '../../domain/ids.js';
import { api, newOrderId, payer, walletSign } from '../support/api.js';
import { connectTemporal } from '../support/temporal.js';

// Spelled out here rather than imported: these names are what operators type into the Temporal UI.
const OrderId = defineSearchAttributeKey('OrderId', SearchAttributeType.KEYWORD);
const Payer = defineSearchAttributeKey('Payer', SearchAttributeType.KEYWORD);
const AuthorizationState = defineSearchAttributeKey('AuthorizationState', SearchAttributeType.KEYWORD);
const AmountMinor = defineSearchAttributeKey('AmountMinor', SearchAttributeType.INT);
const ValidBefore = defineSearchAttributeKey('ValidBefore', SearchAttributeType.DATETIME);

const p = payer(2);

let temporal: Client;
beforeAll(async () => {
  temporal = await connectTemporal();
});
afterAll(async () => {
  await temporal?.connection.close();
});

/** The order's authorization workflows (its refunds ledger carries the order id too). */
async function listByOrder(orderId: string): Promise<WorkflowExecutionInfo[]> {
  const found: WorkflowExecutionInfo[] = [];
  const query = `OrderId = "${orderId}" AND WorkflowType = "authorizationWorkflow"`;
  for await (const execution of temporal.workflow.list({ query })) found.push(execution);
  return found;
}

/** Visibility is eventually consistent: poll until the one execution for the order shows `state`. */
async function waitForVisibleState(orderId: string, state: string): Promise<WorkflowExecutionInfo> {
  return vi.waitFor(
    async () => {
      const found = await listByOrder(orderId);
      expect(found).toHaveLength(1);
      expect(found[0]!.typedSearchAttributes.get(AuthorizationState)).toBe(state);
      return found[0]!;
    },
    { timeout: 10_000, interval: 200 },
  );
}

/** The workflow's `status` query, as the Temporal UI runs it, must say what GET says. */
async function expectQueryMatchesGet(id: string, execution: WorkflowExecutionInfo, state: string) {
  const got = await api('GET', `/v1/authorizations/${id}`);
  expect(got.status).toBe(200);
  expect(got.body.state).toBe(state);
  const queried = await temporal.workflow.getHandle(execution.workflowId, execution.runId).query<Record<string, unknown>>('status');
  expect(queried.state).toBe(state);
  // The payer's links (checkoutUrl, cancelUrl) are the HTTP layer's, not the workflow's; a plain
  // authorization's capture fields (amountCapturable, captures, hold) are derived from the same view.
  const { checkoutUrl: _checkout, cancelUrl: _cancel, ...resource } = got.body;
  expect(asResource(id, queried as unknown as AuthorizationView)).toEqual(resource);
}

describe('Temporal visibility: the authorization is findable by order id', () => {
  it('shows order, payer, amount and a state that follows drafted → stored → captured', async () => {
    const orderId = newOrderId('visible');
    const created = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '7.25' });
    expect(created.status).toBe(201);
    const { id } = created.body;
    const ids = parseResourceId(id);
    expect(ids).toBeDefined();

    const drafted = await waitForVisibleState(orderId, 'drafted');
    expect(drafted.workflowId).toBe(`authorization-${orderId}`);
    expect(drafted.runId).toBe(ids!.runId);
    expect(drafted.status.name).toBe('RUNNING');
    expect(drafted.typedSearchAttributes.get(OrderId)).toBe(orderId);
    expect(drafted.typedSearchAttributes.get(Payer)).toBe(p.address);
    expect(drafted.typedSearchAttributes.get(AmountMinor)).toBe(7_250_000);
    expect(drafted.typedSearchAttributes.get(ValidBefore)?.getTime()).toBe(Number(created.body.authorization.validBefore) * 1000);
    await expectQueryMatchesGet(id, drafted, 'drafted');

    const signature = walletSign(created.body.typedData, p.privateKey);
    const stored = await api('POST', `/v1/authorizations/${id}/signature`, { signature });
    expect(stored.status).toBe(200);
    const visibleStored = await waitForVisibleState(orderId, 'stored');
    expect(visibleStored.runId).toBe(ids!.runId);
    expect(visibleStored.typedSearchAttributes.get(Payer)).toBe(p.address);
    expect(visibleStored.typedSearchAttributes.get(AmountMinor)).toBe(7_250_000);
    // Search attributes are not encrypted: the payment credential must never be in them.
    expect(JSON.stringify(visibleStored.searchAttributes)).not.toContain(signature.slice(2, 66));
    await expectQueryMatchesGet(id, visibleStored, 'stored');

    const captured = await api('POST', `/v1/authorizations/${id}/capture`);
    expect(captured.status).toBe(200);
    expect(captured.body.state).toBe('captured');
    const visibleCaptured = await waitForVisibleState(orderId, 'captured');
    expect(visibleCaptured.workflowId).toBe(`authorization-${orderId}`);
    expect(visibleCaptured.typedSearchAttributes.get(OrderId)).toBe(orderId);
    expect(visibleCaptured.typedSearchAttributes.get(Payer)).toBe(p.address);
    expect(visibleCaptured.typedSearchAttributes.get(AmountMinor)).toBe(7_250_000);
    await expectQueryMatchesGet(id, visibleCaptured, 'captured');
    // The workflow closes once the authorization is final.
    await vi.waitFor(
      async () => {
        const [execution] = await listByOrder(orderId);
        expect(execution?.status.name).toBe('COMPLETED');
      },
      { timeout: 10_000, interval: 200 },
    );
  });

  it('an operator can combine order, payer and state in one query', async () => {
    const orderId = newOrderId('visible-and');
    const created = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '1' });
    expect(created.status).toBe(201);
    await waitForVisibleState(orderId, 'drafted');
    const query = (state: string) => `OrderId = "${orderId}" AND Payer = "${p.address}" AND AuthorizationState = "${state}"`;
    await vi.waitFor(
      async () => {
        const hits: string[] = [];
        for await (const e of temporal.workflow.list({ query: query('drafted') })) hits.push(e.workflowId);
        expect(hits).toEqual([`authorization-${orderId}`]);
      },
      { timeout: 10_000, interval: 200 },
    );
    const misses: string[] = [];
    for await (const e of temporal.workflow.list({ query: query('stored') })) misses.push(e.workflowId);
    expect(misses).toEqual([]);

    const voided = await api('POST', `/v1/authorizations/${created.body.id}/void`, { reason: 'test cleanup' });
    expect(voided.status).toBe(200);
    const visibleVoided = await waitForVisibleState(orderId, 'voided');
    await expectQueryMatchesGet(created.body.id, visibleVoided, 'voided');
  });
});
