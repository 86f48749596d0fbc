// Void: the merchant (API), an operator (CLI) or the Temporal UI (a `void` signal sealed by the codec server's /encode) drops
// an authorization offchain. It ends `voided`, nothing is ever submitted for it, and its nonce stays
// unused onchain; commands afterwards are refused as invalid_state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowUpdateStage, type Client } from '@temporalio/client';
import { api, chain, newOrderId, payer, tokenBalance } from '../support/api.js';
import { expectApiError, expectNoMerchantTransactionFor, markMerchant } from '../support/sideEffects.js';
import { connectTemporal } from '../support/temporal.js';
import { operatorSealed, sendRawSignal } from '../support/forgedInputs.js';
import {
  authorizationState,
  draft,
  expectMerchantCredited,
  getAuthorization,
  historyStates,
  nonceLogs,
  runCli,
  sleep,
  stored,
  waitForState,
} from '../support/lifecycle.js';

const p = payer(5);

let temporal: Client;
beforeAll(async () => {
  temporal = await connectTemporal();
});
afterAll(async () => {
  await temporal?.connection.close();
});

/** The void left no trace onchain: no merchant transaction for the payer, the nonce unused, no logs. */
async function expectNothingSent(mark: Awaited<ReturnType<typeof markMerchant>>, resource: any, balanceBefore: bigint) {
  await sleep(1_000);
  await expectNoMerchantTransactionFor(mark, p.address);
  const { from, nonce } = resource.authorization;
  expect(await authorizationState(from, nonce)).toBe(false);
  const logs = await nonceLogs(from, nonce);
  expect({ used: logs.used.length, canceled: logs.canceled.length }).toEqual({ used: 0, canceled: 0 });
  expect(await tokenBalance(p.address)).toBe(balanceBefore);
}

async function expectCaptureRefused(id: string) {
  const res = await api('POST', `/v1/authorizations/${id}/capture`);
  expectApiError(res, 409, 'invalid_state');
  expect((await getAuthorization(id)).state).toBe('voided');
}

describe('void through the HTTP API', () => {
  it('voids a drafted authorization: voided, nothing sent, a later capture is 409', async () => {
    const mark = await markMerchant();
    const balance = await tokenBalance(p.address);
    const drafted = await draft(p, '4.5');

    const res = await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'order canceled by customer', by: 'shop-backend' });
    expect(res.status).toBe(200);
    expect(res.body.state).toBe('voided');
    expect(res.body.void).toMatchObject({ reason: 'order canceled by customer', by: 'shop-backend' });
    expect(Number.isNaN(Date.parse(res.body.void.at))).toBe(false);
    expect(res.body.capture).toBeNull();
    expect(historyStates(res.body)).toEqual(['drafting', 'drafted', 'voided']);

    expect((await getAuthorization(drafted.id)).state).toBe('voided');
    await expectNothingSent(mark, drafted, balance);
    await expectCaptureRefused(drafted.id);
    // A second void of a final authorization is refused too, and the first record stays.
    const again = await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'twice' });
    expectApiError(again, 409, 'invalid_state');
    expect((await getAuthorization(drafted.id)).void.reason).toBe('order canceled by customer');
  });

  it('voids a stored (signed) authorization: voided, nothing sent, the nonce stays unused, capture is 409', async () => {
    const mark = await markMerchant();
    const balance = await tokenBalance(p.address);
    const s = await stored(p, '6');

    const res = await api('POST', `/v1/authorizations/${s.id}/void`, { reason: 'out of stock' });
    expect(res.status).toBe(200);
    expect(res.body.state).toBe('voided');
    expect(res.body.void.reason).toBe('out of stock');
    expect(typeof res.body.void.by).toBe('string');
    expect(historyStates(res.body)).toEqual(['drafting', 'drafted', 'stored', 'voided']);

    // Past a reconcile tick (2 s): the voided workflow still never submits anything.
    await sleep(2_500);
    await expectNothingSent(mark, s, balance);
    await expectCaptureRefused(s.id);
  });
});

describe('void by an operator', () => {
  it('the CLI voids by --order, with the reason and the operator name', async () => {
    const mark = await markMerchant();
    const balance = await tokenBalance(p.address);
    const orderId = newOrderId('lc-void-cli');
    const s = await stored(p, '2.5', { orderId });

    const out = await runCli(['void', '--order', orderId, '--reason', 'fraud review', '--by', 'alice']);
    expect(out, out.stderr).toMatchObject({ code: 0 });
    expect(out.stdout).toContain(`voided ${s.id}`);
    expect(out.stdout).toContain('fraud review');

    const after = await getAuthorization(s.id);
    expect(after.state).toBe('voided');
    expect(after.void).toMatchObject({ reason: 'fraud review', by: 'alice' });

    const shown = await runCli(['get', '--order', orderId, '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: s.id, state: 'voided', void: { reason: 'fraud review', by: 'alice' } });

    await expectNothingSent(mark, s, balance);
    await expectCaptureRefused(s.id);
  });

  it('a `void` signal sealed by the codec server (as the Temporal UI sends it) voids the authorization', async () => {
    const mark = await markMerchant();
    const balance = await tokenBalance(p.address);
    const orderId = newOrderId('lc-void-signal');
    const s = await stored(p, '3', { orderId });

    await sendRawSignal(temporal, `authorization-${orderId}`, 'void', await operatorSealed({ orderId, reason: 'duplicate order', by: 'ops' }));
    const voided = await waitForState(s.id, 'voided', 10_000);
    expect(voided.void).toMatchObject({ reason: 'duplicate order', by: 'ops' });
    expect(historyStates(voided)).toEqual(['drafting', 'drafted', 'stored', 'voided']);

    // The workflow ran to completion with the voided view as its result.
    const result = await temporal.workflow.getHandle(`authorization-${orderId}`).result();
    expect((result as { state: string }).state).toBe('voided');

    await expectNothingSent(mark, s, balance);
    await expectCaptureRefused(s.id);
  });

  it('a `void` signal to a drafted authorization works too, and the CLI then reports it voided', async () => {
    const orderId = newOrderId('lc-void-signal-draft');
    const d = await draft(p, '1', { orderId });
    await sendRawSignal(temporal, `authorization-${orderId}`, 'void', await operatorSealed({ orderId, reason: 'typo in amount', by: 'ops' }));
    const voided = await waitForState(d.id, 'voided', 10_000);
    expect(voided.void).toMatchObject({ reason: 'typo in amount', by: 'ops' });
    expect(await authorizationState(p.address, d.authorization.nonce)).toBe(false);

    const again = await runCli(['void', d.id, '--reason', 'again']);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/error invalid_state/);
  });

  it('a `void` signal with blank fields still records who and why (the defaults), as the API never stores a blank reason', async () => {
    const orderId = newOrderId('lc-void-signal-blank');
    const d = await draft(p, '1', { orderId });
    await sendRawSignal(temporal, `authorization-${orderId}`, 'void', await operatorSealed({ orderId, reason: '   ', by: '' }));
    const voided = await waitForState(d.id, 'voided', 10_000);
    expect(voided.void.reason.trim(), 'void.reason').not.toBe('');
    expect(voided.void.by.trim(), 'void.by').not.toBe('');
  });
});

describe('void against a capture in flight', () => {
  it('refuses a void (409) once a capture has been accepted, and the capture completes', async () => {
    const s = await stored(p, '0.75');
    const balance = await tokenBalance(p.address);
    // Start the capture the way the API does and wait until the workflow has accepted it.
    const handle = temporal.workflow.getHandle(`authorization-${s.orderId}`);
    const update = await handle.startUpdate<{ state: string }, []>('capture', { waitForStage: WorkflowUpdateStage.ACCEPTED });

    const voidRes = await api('POST', `/v1/authorizations/${s.id}/void`, { reason: 'too late', by: 'ops' });
    const captureOutcome = await update.result().then(
      (v) => v.state,
      (err: Error) => `failed: ${err.cause instanceof Error ? err.cause.message : err.message}`,
    );
    const after = await getAuthorization(s.id);
    // One picture of what happened, so a failure shows the void answer, the capture outcome and the final state together.
    expect({ void: [voidRes.status, voidRes.body.error?.code], capture: captureOutcome, state: after.state }).toEqual({
      void: [409, 'invalid_state'],
      capture: 'captured',
      state: 'captured',
    });
    expect(after.void).toBeNull();
    expect(await tokenBalance(p.address)).toBe(balance - 750_000n);
    const receipt = await chain().getTransactionReceipt({ hash: after.capture.transactionHash });
    await expectMerchantCredited(receipt, p.address, 750_000n);
    expect((await nonceLogs(p.address, s.authorization.nonce)).used).toHaveLength(1);
  });

  it('capture and void racing through the API end in one consistent outcome, never a 500', async () => {
    const mark = await markMerchant();
    const s = await stored(p, '0.5');
    const balance = await tokenBalance(p.address);
    const capturing = api('POST', `/v1/authorizations/${s.id}/capture`);
    await sleep(30);
    const voided = await api('POST', `/v1/authorizations/${s.id}/void`, { reason: 'race' });
    const captured = await capturing;
    const outcome = { capture: [captured.status, captured.body.error?.code], void: [voided.status, voided.body.error?.code] };

    const final = await getAuthorization(s.id);
    if (final.state === 'voided') {
      // The void won: the capture is refused as invalid_state and nothing was sent.
      expect(outcome).toEqual({ capture: [409, 'invalid_state'], void: [200, undefined] });
      await expectNothingSent(mark, s, balance);
    } else {
      // The capture won: the void is refused and the payment is final.
      expect(outcome).toEqual({ capture: [200, undefined], void: [409, 'invalid_state'] });
      expect(final.state).toBe('captured');
      expect(await tokenBalance(p.address)).toBe(balance - 500_000n);
    }
  });
});
