// GET /v1/authorizations/{id}?wait=N (issue 16): a caller waits for the state to change instead of
// polling. It answers with the new state when the change happens, long before the wait is over.
import { describe, expect, it } from 'vitest';
import { api, payer, walletSign } from '../support/api.js';
import { draft, runCli, stored, waitForState } from '../support/lifecycle.js';

const p = payer(8);
const WAIT = 30;

describe('GET /v1/authorizations/{id}?wait=', () => {
  it('answers as soon as the payer signs, with the stored resource', async () => {
    const drafted = await draft(p, '0.31');
    const started = Date.now();
    const waiting = api('GET', `/v1/authorizations/${drafted.id}?wait=${WAIT}`);
    setTimeout(() => void api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: walletSign(drafted.typedData, p.privateKey) }), 1_000);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.state).toBe('stored');
    // It woke on the change: not at the end of the wait.
    expect(Date.now() - started).toBeLessThan(WAIT * 1000 - 5_000);
  }, 60_000);

  it("follows a capture to captured (Temporal long-polls the run's close), given the state the caller has", async () => {
    const resource = await stored(p, '0.32');
    const capture = api('POST', `/v1/authorizations/${resource.id}/capture`, {});
    await waitForState(resource.id, 'capturing', 20_000).catch(() => undefined);
    const started = Date.now();
    const answer = await api('GET', `/v1/authorizations/${resource.id}?wait=${WAIT}&state=capturing`);
    expect(answer.status).toBe(200);
    expect(answer.body.state).toBe('captured');
    expect(answer.body.capture.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Date.now() - started).toBeLessThan(WAIT * 1000 - 5_000);
    await capture;
  }, 90_000);

  it("answers at once when the state already differs from the caller's, or is final", async () => {
    const resource = await stored(p, '0.33');
    const started = Date.now();
    expect((await api('GET', `/v1/authorizations/${resource.id}?wait=${WAIT}&state=drafted`)).body.state).toBe('stored');
    await api('POST', `/v1/authorizations/${resource.id}/void`, { reason: 'test' });
    expect((await api('GET', `/v1/authorizations/${resource.id}?wait=${WAIT}`)).body.state).toBe('voided');
    expect(Date.now() - started).toBeLessThan(WAIT * 1000);
  }, 60_000);

  it('answers with the resource as it stands when nothing changes within the wait', async () => {
    const drafted = await draft(p, '0.34');
    const answer = await api('GET', `/v1/authorizations/${drafted.id}?wait=1`);
    expect(answer.status).toBe(200);
    expect(answer.body.state).toBe('drafted');
    expect(answer.body.id).toBe(drafted.id);
  });

  it.each([
    ['wait=31', 'wait'],
    ['wait=-1', 'wait'],
    ['wait=1.5', 'wait'],
    ['wait=abc', 'wait'],
    ['state=bogus', 'state'],
    ['since=1', 'since'],
  ])('refuses ?%s with 400 naming the field', async (query, field) => {
    const drafted = await draft(p, '0.35');
    const answer = await api('GET', `/v1/authorizations/${drafted.id}?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'validation_error', details: { field } });
  });

  it('the CLI waits too: authcap get --wait', async () => {
    const drafted = await draft(p, '0.36');
    // --state names what the operator already saw, so a change before the CLI is up still counts.
    const cli = runCli(['get', drafted.id, '--wait', '25', '--state', 'drafted', '--json']);
    setTimeout(() => void api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: walletSign(drafted.typedData, p.privateKey) }), 1_000);
    const started = Date.now();
    const { code, stdout } = await cli;
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).state).toBe('stored');
  }, 60_000);
});
