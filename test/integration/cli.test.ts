// The operator CLI against the suite's stack, as an operator runs it: `npx authcap …`.
import { describe, expect, it, vi } from 'vitest';
import { api, newOrderId, payer, walletSign } from '../support/api.js';
import { runCli, stored, waitForState } from '../support/lifecycle.js';

const p = payer(1);

/** A held payment (docs/holds.md): drafted with hold: true on the first network (it has an escrow), signed, at depth. */
async function held(amount: string): Promise<any> {
  const created = await api('POST', '/v1/authorizations', { orderId: newOrderId('cli-hold'), payer: p.address, amount, hold: true });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.hold).not.toBeNull();
  const signed = await api('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: walletSign(created.body.typedData, p.privateKey) });
  expect(signed.status, JSON.stringify(signed.body)).toBe(200);
  return signed.body.state === 'held' ? signed.body : waitForState(created.body.id, 'held');
}

describe('authcap (operator CLI)', () => {
  it('lists stored authorizations as a table, with paging', async () => {
    const a = await stored(p, '0.3');
    const b = await stored(p, '0.4');
    const out = await runCli(['list', '--state', 'stored', '--payer', p.address, '--limit', '1']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/┌.*┐/);
    expect(out.stdout).toMatch(/│ id\s+│ order\s+│ state/);
    expect(out.stdout).toMatch(/more: --page-token [A-Za-z0-9_-]+/);
    const token = /--page-token ([A-Za-z0-9_-]+)/.exec(out.stdout)![1]!;
    const next = await runCli(['list', '--state', 'stored', '--payer', p.address, '--limit', '1', '--page-token', token, '--json']);
    const first = /auth_[A-Za-z0-9_.-]+/.exec(out.stdout)![0];
    const second = JSON.parse(next.stdout).data[0].id;
    expect([a.id, b.id]).toContain(second);
    expect(second).not.toBe(first);
  });

  it('shows amounts in token units ("0.30 USDC") in the list and get tables; --json keeps the decimal strings of the API', async () => {
    const s = await stored(p, '0.3');
    // Visibility lags a write by a moment: the row appears once it is listed.
    const listed = await vi.waitFor(
      async () => {
        const out = await runCli(['list', '--order', s.orderId]);
        expect(out.code, out.stderr).toBe(0);
        expect(out.stdout).toContain(s.id);
        return out;
      },
      { timeout: 15_000, interval: 500 },
    );
    expect(listed.stdout).toContain('0.30 USDC');
    expect(listed.stdout).not.toContain('300000');
    const shown = await runCli(['get', s.id]);
    expect(shown.stdout).toMatch(/│ amount\s+│ 0\.30 USDC/);
    const json = JSON.parse((await runCli(['get', s.id, '--json'])).stdout);
    expect(json.amount).toBe('0.3');
  });

  it('prints the history of an authorization: every transition with its event, actor and transaction', async () => {
    const s = await stored(p, '0.35');
    const captured = await api('POST', `/v1/authorizations/${s.id}/capture`);
    expect(captured.body.state).toBe('captured');
    const out = await runCli(['history', s.id]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain('is captured');
    for (const state of ['drafting', 'drafted', 'stored', 'capturing', 'captured']) expect(out.stdout).toContain(state);
    expect(out.stdout).toContain('CAPTURE_CONFIRMED');
    expect(out.stdout).toContain(captured.body.capture.transactionHash.slice(0, 20));
    const json = JSON.parse((await runCli(['history', s.id, '--json'])).stdout);
    const last = json.history.at(-1);
    expect(last).toMatchObject({ state: 'captured', event: 'CAPTURE_CONFIRMED', actor: 'chain', transactionHash: captured.body.capture.transactionHash });
  });

  it('creates, lists and revokes API keys; an operator key cannot create or capture (403) but can read and void', async () => {
    const created = await runCli(['keys', 'create', '--role', 'operator', '--label', 'cli-test', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const { key, id } = JSON.parse(created.stdout);
    expect(key).toMatch(/^ak_/);
    const s = await stored(p, '0.45');
    expect((await api('GET', `/v1/authorizations/${s.id}`, undefined, { key })).status).toBe(200);
    const create = await api('POST', '/v1/authorizations', { orderId: `op-${Date.now()}`, payer: p.address, amount: '1' }, { key });
    expect(create.status).toBe(403);
    expect(create.body.error.code).toBe('forbidden');
    expect((await api('POST', `/v1/authorizations/${s.id}/capture`, {}, { key })).status).toBe(403);
    const voided = await api('POST', `/v1/authorizations/${s.id}/void`, { reason: 'operator void' }, { key });
    expect(voided.status).toBe(200);
    expect(voided.body.void.by).toBe('operator');
    const listed = await runCli(['keys', 'list']);
    expect(listed.stdout).toContain(id);
    expect((await runCli(['keys', 'revoke', id])).code).toBe(0);
    // The running API re-reads the key file: the revoked key is refused within a couple of seconds.
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await api('GET', `/v1/authorizations/${s.id}`, undefined, { key })).status).toBe(401);
  });

  it('a held payment: get shows what is held, capturable and until when; capture takes parts, once per --idempotency-key; captures lists them; --final gives the rest back', async () => {
    const h = await held('1.00');
    const shown = await runCli(['get', h.id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/│ state\s+│ held/);
    expect(shown.stdout).toMatch(/│ held\s+│ 1\.00 USDC/);
    expect(shown.stdout).toMatch(/│ capturable\s+│ 1\.00 USDC/);
    expect(shown.stdout).toMatch(/│ captured\s+│ 0\.00 USDC/);
    expect(shown.stdout).toMatch(new RegExp(`│ capture before\\s+│ ${h.hold.captureBefore}`));
    expect(shown.stdout).toMatch(/│ released\s+│ —/);

    const first = await runCli(['capture', h.id, '--amount', '0.40', '--idempotency-key', `${h.id}-part-1`]);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toMatch(/│ captured\s+│ 0\.40 USDC/);
    expect(first.stdout).toMatch(/│ capturable\s+│ 0\.60 USDC/);
    expect(first.stdout).toMatch(/│ cap_\S+\s+│ 0\.40 USDC\s+│ no\s+│ succeeded/);
    // The same key again: the same part, never a second capture.
    const again = await runCli(['capture', h.id, '--amount', '0.40', '--idempotency-key', `${h.id}-part-1`, '--json']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).captures).toHaveLength(1);
    // More than is left: refused, and nothing is asked of the chain.
    const over = await runCli(['capture', h.id, '--amount', '0.61', '--idempotency-key', `${h.id}-over`]);
    expect(over.code).toBe(1);
    expect(over.stdout).toContain('error amount_exceeds_capturable');

    const listed = await runCli(['captures', h.id]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/│ id\s+│ amount\s+│ final\s+│ status/);
    const part = JSON.parse(again.stdout).captures[0];
    expect(listed.stdout).toContain(part.id);
    expect(listed.stdout).toContain(part.transactionHash.slice(0, 20));

    const last = await runCli(['capture', h.id, '--amount', '0.25', '--final', '--idempotency-key', `${h.id}-part-2`]);
    expect(last.code, last.stdout + last.stderr).toBe(0);
    const done = await waitForState(h.id, 'captured', 30_000);
    expect(done.hold.release).toMatchObject({ kind: 'void', amount: '0.35' });
    const after = await runCli(['get', h.id]);
    expect(after.stdout).toMatch(/│ captured\s+│ 0\.65 USDC/);
    expect(after.stdout).toMatch(/│ capturable\s+│ 0\.00 USDC/);
    expect(after.stdout).toMatch(/│ released\s+│ 0\.35 USDC by void/);
    const parts = JSON.parse((await runCli(['captures', '--order', h.orderId, '--json'])).stdout);
    expect(parts.map((c: any) => [c.amount, c.final, c.status])).toEqual([
      ['0.4', false, 'succeeded'],
      ['0.25', true, 'succeeded'],
    ]);
    // A dozen CLI processes, each starting its own client: more than the suite's default minute on a busy machine.
  }, 120_000);

  it('a held payment voided from the CLI: the answer says the rest is on its way back; it ends voided with all of it released', async () => {
    const h = await held('0.50');
    const voided = await runCli(['void', h.id, '--reason', 'out of stock']);
    expect(voided.code, voided.stdout + voided.stderr).toBe(0);
    expect(voided.stdout).toMatch(/voiding the rest of auth_\S+ \(order [^)]+\): out of stock; what is left goes back to the payer/);
    await waitForState(h.id, 'voided', 30_000);
    const shown = await runCli(['get', h.id]);
    expect(shown.stdout).toMatch(/│ released\s+│ 0\.50 USDC by void/);
    expect((await runCli(['captures', h.id])).stdout).toContain('no captures');
  });
});
