// Issue 15, finding 1, and the contract-wallet lockout after it: refused commands leave no trace, and
// no caller may grow one authorization's history without bound, or lock its payer out.
// - Through the API (which has the chain at hand) a payer's signature or cancellation is checked
//   before it is sent: a stranger's is 422 invalid_signature however often, reaches no workflow and
//   spends no budget (never too_many_attempts).
// - A caller that sends signatures unchecked (a Temporal client with the codec keys, or the typed
//   library without rpcUrl) meets the workflow's own screen: what only the chain can judge passes
//   while a small budget lasts, then 429 too_many_attempts without a trace, except the payer's own
//   ECDSA signature.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { generatePrivateKey } from 'viem/accounts';
import { AuthcapClient } from '../../client/authcapClient.js';
import { parseResourceId } from '../../domain/ids.js';
import { AuthcapError } from '../../domain/errors.js';
import { OrderIdAttribute, PayerAttribute, AuthorizationStateAttribute } from '../../domain/searchAttributes.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { FREE_FAILURES } from '../../workflows/attemptBudget.js';
import { api, dev, newOrderId, payer, walletSign } from '../support/api.js';
import { draft, getAuthorization, stored, waitForState } from '../support/lifecycle.js';
import {
  acceptedUpdates,
  checkoutPostUrl,
  closeFloodConnections,
  expectStrangerRefusals,
  flood,
  postFrom,
  signatureChecksInHistory,
  strangerAddresses,
  tally,
} from '../support/signatureFlood.js';
import { connectTemporal } from '../support/temporal.js';

const p = payer(5);
/** Anyone's key but the payer's: it only signs, never sends a transaction. */
const strangerKey = generatePrivateKey();
const ATTEMPTS = 1_000;

let temporal: Client;
beforeAll(async () => {
  temporal = await connectTemporal();
});
afterAll(async () => {
  closeFloodConnections();
  await temporal?.connection.close();
});

/** The authorization's workflow, addressed as a client holding the codec keys would: past the API and its checks. */
function workflowOf(id: string) {
  const { workflowId } = parseResourceId(id)!;
  return temporal.workflow.getHandle(workflowId);
}

/** A refusal the workflow's validator or handler gave, as a Temporal client sees it. */
const refusedWith = (type: string) => ({ cause: { type } });

async function expectSpentBudget(attempt: Promise<unknown>): Promise<void> {
  const err = (await attempt.then(
    () => undefined,
    (e: unknown) => e,
  )) as { cause?: { type?: string; details?: { retryAfterSeconds?: number }[] } } | undefined;
  expect(err?.cause?.type, String(err)).toBe('too_many_attempts');
  expect(err!.cause!.details?.[0]?.retryAfterSeconds).toBeGreaterThan(0);
}

describe('strangers through the API', () => {
  it(`${ATTEMPTS} wrong signatures are each 422 invalid_signature and none reaches the workflow; the payer then signs and the capture completes`, async () => {
    const drafted = await draft(p, '0.25');
    const updatesBefore = await acceptedUpdates(temporal, drafted.id);
    const wrong = walletSign(drafted.typedData, strangerKey);
    // The order-service key is shared with the other test files: keep well inside its rate (500/s).
    const answers = await flood(ATTEMPTS, 10, () => api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: wrong }), { perSecond: 250 });

    const judged = expectStrangerRefusals(answers, ATTEMPTS);
    // At that pace the key's limit is hardly touched: the flood was judged, not merely rate limited.
    expect(judged, JSON.stringify(tally(answers))).toBeGreaterThan(ATTEMPTS / 2);
    // Not one update entered history, and the workflow never asked the chain about a signature.
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(updatesBefore);
    expect(await signatureChecksInHistory(temporal, drafted.id)).toBe(0);

    expect((await getAuthorization(drafted.id)).state).toBe('drafted');
    const signed = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: walletSign(drafted.typedData, p.privateKey) });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect(signed.body.state).toBe('stored');
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(updatesBefore + 1);
    const captured = await api('POST', `/v1/authorizations/${drafted.id}/capture`, {});
    expect([200, 202]).toContain(captured.status);
    expect((await waitForState(drafted.id, 'captured', 30_000)).state).toBe('captured');
  }, 240_000);

  it(`through the checkout link too: ${ATTEMPTS} wrong signatures from many addresses, each 422, none reaching the workflow`, async () => {
    const drafted = await draft(p, '0.26');
    const url = checkoutPostUrl(drafted.checkoutUrl, 'signature');
    const updatesBefore = await acceptedUpdates(temporal, drafted.id);
    const wrong = walletSign(drafted.typedData, strangerKey);
    // The public rate limit is per client address (20/s, burst 40): from 50 addresses, 20 requests
    // each, every attempt gets past it and is judged. The rate limit is no part of this defence.
    const from = strangerAddresses(50);
    const answers = await flood(ATTEMPTS, 10, (i) => postFrom(from[i % from.length]!, url, { signature: wrong }));

    expect(expectStrangerRefusals(answers, ATTEMPTS), JSON.stringify(tally(answers))).toBe(ATTEMPTS);
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(updatesBefore);
    expect(await signatureChecksInHistory(temporal, drafted.id)).toBe(0);

    // The payer, from one of the flood's own addresses: nothing was held against it either.
    const signed = await postFrom(from[0]!, url, { signature: walletSign(drafted.typedData, p.privateKey) });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect(signed.body.state).toBe('stored');
    const captured = await api('POST', `/v1/authorizations/${drafted.id}/capture`, {});
    expect([200, 202]).toContain(captured.status);
    expect((await waitForState(drafted.id, 'captured', 30_000)).state).toBe('captured');
  }, 240_000);
});

describe('the attempt budget, for callers that send signatures unchecked', () => {
  it(`takes ${FREE_FAILURES} chain-checked failures, then refuses with 429 without a trace; the payer's own signature still goes through`, async () => {
    const drafted = await draft(p, '0.29');
    const handle = workflowOf(drafted.id);
    const before = await acceptedUpdates(temporal, drafted.id);
    const wrong = walletSign(drafted.typedData, strangerKey);
    // Straight to the workflow, as a client holding the codec keys sends it: nobody checked it first.
    for (let i = 0; i < FREE_FAILURES; i += 1) {
      await expect(handle.executeUpdate('submitSignature', { args: [{ signature: wrong }] })).rejects.toMatchObject(refusedWith('invalid_signature'));
    }
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(before + FREE_FAILURES);
    expect(await signatureChecksInHistory(temporal, drafted.id)).toBe(FREE_FAILURES);
    for (let i = 0; i < 20; i += 1) await expectSpentBudget(handle.executeUpdate('submitSignature', { args: [{ signature: wrong }] }));
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(before + FREE_FAILURES);

    // The API still judges the stranger itself: 422, not the spent budget's 429, and nothing sent.
    const viaApi = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: wrong });
    expect({ status: viaApi.status, code: viaApi.body.error?.code }).toEqual({ status: 422, code: 'invalid_signature' });
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(before + FREE_FAILURES);

    // Nobody is locked out: the payer's own ECDSA signature passes the spent budget.
    const view = await handle.executeUpdate('submitSignature', { args: [{ signature: walletSign(drafted.typedData, p.privateKey) }] });
    expect((view as { state: string }).state).toBe('stored');
    expect(await signatureChecksInHistory(temporal, drafted.id)).toBe(FREE_FAILURES + 1);
    expect((await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'test done' })).status).toBe(200);
  }, 120_000);

  it('budgets cancellations the same way, through the typed library without rpcUrl; the payer can still cancel', async () => {
    const d = dev();
    const client = await AuthcapClient.connect(loadTemporalSettings({ address: d.temporalAddress, namespace: d.temporalNamespace }));
    try {
      const resource = await stored(p, '0.28');
      const typedData = (await getAuthorization(resource.id)).cancellationTypedData;
      const wrong = walletSign(typedData, strangerKey);
      const before = await acceptedUpdates(temporal, resource.id);
      const codes: string[] = [];
      for (let i = 0; i < FREE_FAILURES + 20; i += 1) {
        const err = await client.authorizations.cancel(resource.id, wrong).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(AuthcapError);
        codes.push((err as AuthcapError).code);
        if ((err as AuthcapError).code === 'too_many_attempts') expect(Number((err as AuthcapError).details?.retryAfterSeconds)).toBeGreaterThan(0);
      }
      expect(codes).toEqual([...Array(FREE_FAILURES).fill('invalid_signature'), ...Array(20).fill('too_many_attempts')]);
      expect(await acceptedUpdates(temporal, resource.id)).toBe(before + FREE_FAILURES);

      // Through the API a stranger's cancellation is judged before it is sent: 422, nothing reaches the workflow.
      const viaApi = await api('POST', `/v1/authorizations/${resource.id}/cancel`, { signature: wrong });
      expect({ status: viaApi.status, code: viaApi.body.error?.code }).toEqual({ status: 422, code: 'invalid_signature' });
      expect(await acceptedUpdates(temporal, resource.id)).toBe(before + FREE_FAILURES);

      const outcome = await client.authorizations.cancel(resource.id, walletSign(typedData, p.privateKey), { waitMs: 30_000 });
      expect(['canceling', 'canceled']).toContain(outcome.authorization.state);
      expect((await waitForState(resource.id, 'canceled', 30_000)).state).toBe('canceled');
    } finally {
      await client.close();
    }
  }, 120_000);

  it('malformed signatures are refused by the validator: 400, and nothing in history', async () => {
    const drafted = await draft(p, '0.27');
    const before = await acceptedUpdates(temporal, drafted.id);
    // Straight to the workflow, past the API's own parsing: the validator is the last word, marked checked or not.
    const handle = workflowOf(drafted.id);
    for (const signature of ['0x', 'not hex', '0x123', 42]) {
      for (const request of [{ signature }, { signature, checkedOnchain: true }]) {
        await expect(handle.executeUpdate('submitSignature', { args: [request] })).rejects.toMatchObject(refusedWith('validation_error'));
      }
    }
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(before);
    expect((await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'test done' })).status).toBe(200);
  });
});

describe('failed captures', () => {
  it('are budgeted: after the free failures a capture is 429 with Retry-After until the cool-down passes', async () => {
    // More than the payer holds: every precheck fails with insufficient_balance and sends nothing.
    const resource = await stored(p, '900000');
    const codes: string[] = [];
    let last: { status: number; headers?: Headers } | undefined;
    for (let i = 0; i < FREE_FAILURES + 2; i += 1) {
      const res = await api('POST', `/v1/authorizations/${resource.id}/capture`, {});
      codes.push(res.body.error?.code);
      last = res;
    }
    expect(codes).toEqual([...Array(FREE_FAILURES).fill('insufficient_balance'), 'too_many_attempts', 'too_many_attempts']);
    expect(last!.status).toBe(429);
    expect(Number(last!.headers!.get('retry-after'))).toBeGreaterThan(0);
    const after = await getAuthorization(resource.id);
    expect(after.state).toBe('stored');
    expect(after.lastError.code).toBe('insufficient_balance');
  }, 60_000);
});

describe('a drafted authorization whose history grows', () => {
  it('rolls over (continue-as-new) while it waits for the signature, and stays signable', async () => {
    const orderId = newOrderId('rollover');
    const started = await temporal.workflow.start('authorizationWorkflow', {
      taskQueue: 'authcap',
      workflowId: `authorization-${orderId}`,
      args: [
        {
          orderId,
          requestedAt: new Date().toISOString(),
          draft: { payer: p.address, value: '290000' },
          policyOverrides: { historyLimit: 30, reconcileIntervalSeconds: 0 },
        },
      ],
      typedSearchAttributes: [
        { key: OrderIdAttribute, value: orderId },
        { key: PayerAttribute, value: p.address },
        { key: AuthorizationStateAttribute, value: 'drafting' },
      ],
    });
    const id = `auth_${Buffer.from(orderId).toString('base64url')}.${started.firstExecutionRunId}`;
    const drafted = await waitForState(id, 'drafted', 20_000);
    const wrong = walletSign(drafted.typedData, strangerKey);
    const before = await acceptedUpdates(temporal, id);
    // The API would refuse these before they reach the workflow: send them straight to it.
    const handle = workflowOf(id);
    for (let i = 0; i < FREE_FAILURES; i += 1) {
      await expect(handle.executeUpdate('submitSignature', { args: [{ signature: wrong }] })).rejects.toMatchObject(refusedWith('invalid_signature'));
    }
    const first = await temporal.workflow.getHandle(`authorization-${orderId}`, started.firstExecutionRunId).describe();
    expect(first.status.name).toBe('CONTINUED_AS_NEW');
    // The budget survived the rollover, and so did the draft.
    await expectSpentBudget(handle.executeUpdate('submitSignature', { args: [{ signature: wrong }] }));
    expect(await acceptedUpdates(temporal, id)).toBe(before + FREE_FAILURES);
    const signed = await api('POST', `/v1/authorizations/${id}/signature`, { signature: walletSign(drafted.typedData, p.privateKey) });
    expect(signed.body.state).toBe('stored');
    await api('POST', `/v1/authorizations/${id}/void`, { reason: 'test done' });
  }, 120_000);
});
