// The operator CLI against the suite's stack, as an operator runs it: `npx authcap …`.
import { describe, expect, it, vi } from 'vitest';
import { api, payer } from '../support/api.js';
import { runCli, stored } from '../support/lifecycle.js';

const p = payer(1);

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
});
