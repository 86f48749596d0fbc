// Issue 15, finding 1: refused commands must leave no trace, and no caller may grow one
// authorization's history without bound. A stranger's signature is refused by the update validator
// (no history); what only the chain can judge passes while a small budget lasts, then 429.
import { describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { parseResourceId } from '../../client/ids.js';
import { OrderIdAttribute, PayerAttribute, AuthorizationStateAttribute } from '../../domain/searchAttributes.js';
import { FREE_FAILURES } from '../../workflows/attemptBudget.js';
import { api, newOrderId, payer, walletSign } from '../support/api.js';
import { draft, sleep, stored, waitForState } from '../support/lifecycle.js';
import { connectTemporal } from '../support/temporal.js';

const EventType = proto.temporal.api.enums.v1.EventType;
const p = payer(5);
const stranger = payer(6);
/** Events one failed chain-checked attempt may add (update accepted/completed, activity, tasks). */
const EVENTS_PER_FAILED_ATTEMPT = 12;

async function historyLength(temporal: Client, id: string): Promise<number> {
  const { workflowId, runId } = parseResourceId(id)!;
  return (await temporal.workflow.getHandle(workflowId, runId).fetchHistory()).events!.length;
}

/**
 * Updates that entered history. The suite's stack reconciles every 2 s (events of its own), so "no
 * trace" is judged by these: a refused update is never accepted, and leaves no event at all.
 */
async function acceptedUpdates(temporal: Client, id: string): Promise<number> {
  const { workflowId, runId } = parseResourceId(id)!;
  const events = (await temporal.workflow.getHandle(workflowId, runId).fetchHistory()).events!;
  return events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED).length;
}

/** Sends `count` requests, `concurrency` at a time; resolves with every answer's status and code. */
async function flood(count: number, concurrency: number, send: () => Promise<{ status: number; body: any; headers?: Headers }>) {
  const answers: { status: number; code: string; retryAfter: string | null }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next += 1;
        const res = await send();
        answers.push({ status: res.status, code: res.body?.error?.code, retryAfter: res.headers?.get('retry-after') ?? null });
      }
    }),
  );
  return answers;
}

const cancelTypedData = (resource: any) => resource.cancellationTypedData;

describe('a flood of refused signatures', () => {
  it('1,000 wrong signatures add a bounded number of events; the payer then signs and the capture completes', async () => {
    const temporal = await connectTemporal();
    const drafted = await draft(p, '0.25');
    const before = await historyLength(temporal, drafted.id);
    const updatesBefore = await acceptedUpdates(temporal, drafted.id);
    const wrong = walletSign(drafted.typedData, stranger.privateKey);
    const answers = await flood(1_000, 25, () => api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: wrong }));

    // The first few are judged by the chain (a contract wallet could have signed); then 429 with Retry-After.
    // Concurrent attempts while one is being checked are 409 invalid_state (refused by the validator).
    const chainChecked = answers.filter((a) => a.code === 'invalid_signature');
    const refused = answers.filter((a) => a.code === 'too_many_attempts');
    const busy = answers.filter((a) => a.code === 'invalid_state');
    // Only the first burst reaches the workflow; on a loaded machine a few of it may be told to retry.
    const retryLater = answers.filter((a) => (a.status === 503 || a.code === 'rate_limited') && Number(a.retryAfter) > 0);
    expect(chainChecked.length).toBeLessThanOrEqual(FREE_FAILURES + 25);
    expect(retryLater.length).toBeLessThanOrEqual(25);
    const seen = JSON.stringify(
      answers.reduce<Record<string, number>>((m, a) => {
        m[`${a.status} ${a.code}`] = (m[`${a.status} ${a.code}`] ?? 0) + 1;
        return m;
      }, {}),
    );
    expect(chainChecked.length + refused.length + busy.length + retryLater.length, seen).toBe(1_000);
    expect(refused.length).toBeGreaterThan(900);
    expect(refused.every((a) => a.status === 429 && Number(a.retryAfter) > 0)).toBe(true);
    expect((await acceptedUpdates(temporal, drafted.id)) - updatesBefore).toBe(chainChecked.length);
    // Bounded whatever the flood: the budget's attempts, plus the stack's own 2 s reconciliation ticks.
    const grown = (await historyLength(temporal, drafted.id)) - before;
    expect(grown).toBeLessThan(chainChecked.length * EVENTS_PER_FAILED_ATTEMPT + 150);

    // Nothing moved, and the refusals locked nobody out: the payer's own signature is accepted at once.
    expect((await api('GET', `/v1/authorizations/${drafted.id}`)).body.state).toBe('drafted');
    const signed = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: walletSign(drafted.typedData, p.privateKey) });
    expect(signed.status).toBe(200);
    expect(signed.body.state).toBe('stored');
    const captured = await api('POST', `/v1/authorizations/${drafted.id}/capture`, {});
    expect([200, 202]).toContain(captured.status);
    expect((await waitForState(drafted.id, 'captured', 30_000)).state).toBe('captured');
  }, 240_000);

  it('through the checkout link too: refusals are 422 then 429, never 5xx, and leave no trace once the budget is spent', async () => {
    const temporal = await connectTemporal();
    const drafted = await draft(p, '0.26');
    const link = new URL(drafted.checkoutUrl);
    const signatureUrl = `${link.origin}${link.pathname}/signature${link.search}`;
    const wrong = walletSign(drafted.typedData, stranger.privateKey);
    const post = async () => {
      const res = await fetch(signatureUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signature: wrong }) });
      return { status: res.status, body: await res.json(), headers: res.headers };
    };
    // Under the public rate limit (20/s per address), as the probe did.
    const first = await flood(FREE_FAILURES + 3, 1, post);
    expect(first.slice(0, FREE_FAILURES).map((a) => a.code)).toEqual(Array(FREE_FAILURES).fill('invalid_signature'));
    expect(first.slice(FREE_FAILURES).map((a) => a.code)).toEqual(['too_many_attempts', 'too_many_attempts', 'too_many_attempts']);
    const spent = await acceptedUpdates(temporal, drafted.id);
    const later = [];
    for (let i = 0; i < 4; i += 1) {
      later.push(...(await flood(10, 5, post)));
      await sleep(600);
    }
    expect(later.every((a) => a.status === 429)).toBe(true);
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(spent);

    const res = await fetch(signatureUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ signature: walletSign(drafted.typedData, p.privateKey) }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { state: string }).state).toBe('stored');
  }, 120_000);

  it('malformed signatures are refused by the validator: 400, and nothing in history', async () => {
    const temporal = await connectTemporal();
    const drafted = await draft(p, '0.27');
    const before = await acceptedUpdates(temporal, drafted.id);
    const { workflowId, runId } = parseResourceId(drafted.id)!;
    // Straight to the workflow, past the API's own parsing: the validator is the last word.
    const handle = temporal.workflow.getHandle(workflowId, runId);
    for (const signature of ['0x', 'not hex', '0x123', 42]) {
      await expect(handle.executeUpdate('submitSignature', { args: [{ signature }] })).rejects.toMatchObject({ cause: { type: 'validation_error' } });
    }
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(before);
  });
});

describe('wrong cancellation signatures', () => {
  it('are budgeted the same way, and the payer can still cancel', async () => {
    const temporal = await connectTemporal();
    const resource = await stored(p, '0.28');
    const typedData = cancelTypedData((await api('GET', `/v1/authorizations/${resource.id}`)).body);
    const wrong = walletSign(typedData, stranger.privateKey);
    const answers = await flood(40, 4, () => api('POST', `/v1/authorizations/${resource.id}/cancel`, { signature: wrong }));
    const checked = answers.filter((a) => a.code === 'invalid_signature').length;
    expect(checked).toBeLessThanOrEqual(FREE_FAILURES + 4);
    expect(answers.every((a) => ['invalid_signature', 'too_many_attempts', 'invalid_state'].includes(a.code))).toBe(true);
    expect(answers.filter((a) => a.code === 'too_many_attempts').length).toBeGreaterThan(20);
    const spent = await acceptedUpdates(temporal, resource.id);
    await flood(20, 4, () => api('POST', `/v1/authorizations/${resource.id}/cancel`, { signature: wrong }));
    expect(await acceptedUpdates(temporal, resource.id)).toBe(spent);
    const canceled = await api('POST', `/v1/authorizations/${resource.id}/cancel`, { signature: walletSign(typedData, p.privateKey) });
    expect([200, 202]).toContain(canceled.status);
    expect((await waitForState(resource.id, 'canceled', 30_000)).state).toBe('canceled');
  }, 120_000);
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
    const after = (await api('GET', `/v1/authorizations/${resource.id}`)).body;
    expect(after.state).toBe('stored');
    expect(after.lastError.code).toBe('insufficient_balance');
  }, 60_000);
});

describe('a drafted authorization whose history grows', () => {
  it('rolls over (continue-as-new) while it waits for the signature, and stays signable', async () => {
    const temporal = await connectTemporal();
    const orderId = newOrderId('rollover');
    const handle = await temporal.workflow.start('authorizationWorkflow', {
      taskQueue: 'authcap',
      workflowId: `authorization-${orderId}`,
      args: [{ orderId, draft: { payer: p.address, value: '290000' }, policyOverrides: { historyLimit: 30, reconcileIntervalSeconds: 0 } }],
      typedSearchAttributes: [
        { key: OrderIdAttribute, value: orderId },
        { key: PayerAttribute, value: p.address },
        { key: AuthorizationStateAttribute, value: 'drafting' },
      ],
    });
    const id = `auth_${Buffer.from(orderId).toString('base64url')}.${handle.firstExecutionRunId}`;
    const drafted = await waitForState(id, 'drafted', 20_000);
    const wrong = walletSign(drafted.typedData, stranger.privateKey);
    for (let i = 0; i < FREE_FAILURES; i += 1) await api('POST', `/v1/authorizations/${id}/signature`, { signature: wrong });
    const first = await temporal.workflow.getHandle(`authorization-${orderId}`, handle.firstExecutionRunId).describe();
    expect(first.status.name).toBe('CONTINUED_AS_NEW');
    // The budget survived the rollover, and so did the draft.
    expect((await api('POST', `/v1/authorizations/${id}/signature`, { signature: wrong })).body.error.code).toBe('too_many_attempts');
    const signed = await api('POST', `/v1/authorizations/${id}/signature`, { signature: walletSign(drafted.typedData, p.privateKey) });
    expect(signed.body.state).toBe('stored');
    await api('POST', `/v1/authorizations/${id}/void`, { reason: 'test done' });
  }, 120_000);
});
