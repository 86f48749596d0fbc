// Every bad input gets a stable status and code, a message a person can act on, and changes nothing:
// no workflow is started, the resource reads back identical, the payer's balance does not move and
// the merchant sends no transaction for the payer.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { resourceId, workflowIdForOrder } from '../../domain/ids.js';
import { api, chain, dev, newOrderId, payer, walletSign } from '../support/api.js';
import { expectApiError, expectNothingChanges } from '../support/sideEffects.js';
import { connectTemporal, workflowExists } from '../support/temporal.js';

const p = payer(1);
/** Another payer's key, used only to sign (never funded or spent from by this file). */
const other = payer(4);

let temporal: Client;
beforeAll(async () => {
  temporal = await connectTemporal();
});
afterAll(async () => {
  await temporal?.connection.close();
});

async function draft(amount = '3.25', orderId = newOrderId('bad')) {
  const res = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount });
  expect(res.status).toBe(201);
  expect(res.body.state).toBe('drafted');
  return res.body;
}

async function stored(amount = '3.25') {
  const drafted = await draft(amount);
  const signature = walletSign(drafted.typedData, p.privateKey);
  const res = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature });
  expect(res.status).toBe(200);
  expect(res.body.state).toBe('stored');
  return { ...res.body, signature };
}

/** Flips one hex digit in the middle of a signature: same length, still hex, different bytes. */
function tamper(signature: `0x${string}`): `0x${string}` {
  const i = Math.floor(signature.length / 2);
  const flipped = (parseInt(signature[i]!, 16) ^ 0x1).toString(16);
  return `${signature.slice(0, i)}${flipped}${signature.slice(i + 1)}` as `0x${string}`;
}

describe('POST /v1/authorizations with a bad body: 400 validation_error, no workflow started', () => {
  const cases: { name: string; body: (orderId: string) => unknown; message: RegExp }[] = [
    { name: 'amount with 7 decimals', body: (orderId) => ({ orderId, payer: p.address, amount: '1.1234567' }), message: /7 decimal places.*6/ },
    { name: 'zero amount', body: (orderId) => ({ orderId, payer: p.address, amount: '0' }), message: /greater than zero/ },
    { name: 'zero amount with decimals', body: (orderId) => ({ orderId, payer: p.address, amount: '0.000000' }), message: /greater than zero/ },
    { name: 'negative amount', body: (orderId) => ({ orderId, payer: p.address, amount: '-5' }), message: /positive/ },
    { name: 'amount "abc"', body: (orderId) => ({ orderId, payer: p.address, amount: 'abc' }), message: /"abc".*not a decimal/ },
    { name: 'missing amount', body: (orderId) => ({ orderId, payer: p.address }), message: /amount is required/ },
    { name: 'payer "0x123"', body: (orderId) => ({ orderId, payer: '0x123', amount: '1' }), message: /payer must be a 20-byte hex address/ },
    { name: 'payer "not-an-address"', body: (orderId) => ({ orderId, payer: 'not-an-address', amount: '1' }), message: /payer must be a 20-byte hex address/ },
    { name: 'missing orderId', body: () => ({ payer: p.address, amount: '1' }), message: /orderId is required/ },
    { name: 'body not JSON', body: (orderId) => `{"orderId":"${orderId}","payer":"${p.address}","amount":"1"`, message: /not valid JSON/ },
    { name: 'body an array', body: (orderId) => [{ orderId, payer: p.address, amount: '1' }], message: /must be a JSON object/ },
  ];

  it.each(cases)('$name', async ({ body, message }) => {
    const orderId = newOrderId('bad-create');
    await expectNothingChanges({ payer: p.address }, async () => {
      const res = await api('POST', '/v1/authorizations', body(orderId));
      expectApiError(res, 400, 'validation_error', message);
      expect(res.body).not.toHaveProperty('id');
    });
    expect(await workflowExists(temporal, workflowIdForOrder(orderId)), 'a workflow for the order').toBe(false);
  });

  it('leaves the order free: a valid create for the same order then succeeds', async () => {
    const orderId = newOrderId('bad-then-good');
    const bad = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '1.1234567' });
    expectApiError(bad, 400, 'validation_error');
    const good = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '1.123456' });
    expect(good.status).toBe(201);
    expect(good.body.orderId).toBe(orderId);
    expect(good.body.authorization.value).toBe('1123456');
    expect((await api('POST', `/v1/authorizations/${good.body.id}/void`, { reason: 'test cleanup' })).status).toBe(200);
  });
});

describe("signatures that are not the payer's over the draft", () => {
  it('a tampered wallet signature is refused 422 invalid_signature, consumes nothing, and the right one still works', async () => {
    const drafted = await draft('4.5');
    const signature = walletSign(drafted.typedData, p.privateKey);
    const tampered = tamper(signature);
    expect(tampered).not.toBe(signature);
    expect(tampered).toHaveLength(signature.length);

    await expectNothingChanges({ payer: p.address, id: drafted.id }, async () => {
      const res = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: tampered });
      expectApiError(res, 422, 'invalid_signature', /signature/);
    });
    const after = await api('GET', `/v1/authorizations/${drafted.id}`);
    expect(after.body.state).toBe('drafted');
    expect(after.body.lastError).toBeNull();
    expect(after.body.authorization.nonce).toBe(drafted.authorization.nonce);

    // Nothing was consumed: the untampered signature over the same draft is accepted.
    const ok = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature });
    expect(ok.status).toBe(200);
    expect(ok.body.state).toBe('stored');
    expect(ok.body.history.map((h: { state: string }) => h.state)).toEqual(['drafting', 'drafted', 'stored']);
    await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'test cleanup' });
  });

  it("another payer's signature is refused 422 invalid_signature", async () => {
    const drafted = await draft('5');
    const foreign = walletSign(drafted.typedData, other.privateKey);
    await expectNothingChanges({ payer: p.address, id: drafted.id }, async () => {
      const res = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: foreign });
      expectApiError(res, 422, 'invalid_signature', new RegExp(p.address, 'i'));
    });
    expect((await api('GET', `/v1/authorizations/${drafted.id}`)).body.state).toBe('drafted');
    await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'test cleanup' });
  });

  it('a garbage short signature "0x1234" is refused 400 validation_error (one of the two acceptable answers)', async () => {
    const drafted = await draft('5.5');
    await expectNothingChanges({ payer: p.address, id: drafted.id }, async () => {
      const res = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: '0x1234' });
      expect([
        { status: 400, code: 'validation_error' },
        { status: 422, code: 'invalid_signature' },
      ]).toContainEqual({ status: res.status, code: res.body?.error?.code });
      // The API's actual answer: 2 bytes cannot be a signature, so it is refused as input before any
      // verification, with a message that says why. (The first skeleton answered 422 invalid_signature.)
      expectApiError(res, 400, 'validation_error', /signature is 2 bytes.*at least 64/);
    });
    expect((await api('GET', `/v1/authorizations/${drafted.id}`)).body.state).toBe('drafted');
    await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'test cleanup' });
  });
});

describe('commands in the wrong state: 409 invalid_state', () => {
  it('capture before a signature', async () => {
    const drafted = await draft('6');
    await expectNothingChanges({ payer: p.address, id: drafted.id, settleMs: 1000 }, async () => {
      const res = await api('POST', `/v1/authorizations/${drafted.id}/capture`);
      expectApiError(res, 409, 'invalid_state', /cannot capture.*drafted/);
    });
    await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'test cleanup' });
  });

  it('a signature submitted again after the authorization is stored', async () => {
    const auth = await stored('6.5');
    await expectNothingChanges({ payer: p.address, id: auth.id }, async () => {
      const res = await api('POST', `/v1/authorizations/${auth.id}/signature`, { signature: auth.signature });
      expectApiError(res, 409, 'invalid_state', /stored/);
    });
    expect((await api('GET', `/v1/authorizations/${auth.id}`)).body.state).toBe('stored');
    await api('POST', `/v1/authorizations/${auth.id}/void`, { reason: 'test cleanup' });
  });

  it('void after a completed capture', async () => {
    const auth = await stored('1.5');
    const captured = await api('POST', `/v1/authorizations/${auth.id}/capture`);
    expect(captured.status).toBe(200);
    expect(captured.body.state).toBe('captured');
    expect(captured.body.capture.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);

    await expectNothingChanges({ payer: p.address, id: auth.id }, async () => {
      const res = await api('POST', `/v1/authorizations/${auth.id}/void`, { reason: 'customer changed their mind' });
      expectApiError(res, 409, 'invalid_state');
    });
    const after = await api('GET', `/v1/authorizations/${auth.id}`);
    expect(after.body.state).toBe('captured');
    expect(after.body.void).toBeNull();
  });

  it('capture after void sends no transaction', async () => {
    const auth = await stored('2.5');
    const voided = await api('POST', `/v1/authorizations/${auth.id}/void`, { reason: 'order canceled', by: 'support' });
    expect(voided.status).toBe(200);
    expect(voided.body.state).toBe('voided');
    expect(voided.body.void).toMatchObject({ reason: 'order canceled', by: 'support' });

    await expectNothingChanges({ payer: p.address, id: auth.id, settleMs: 1500 }, async () => {
      const res = await api('POST', `/v1/authorizations/${auth.id}/capture`);
      expectApiError(res, 409, 'invalid_state');
    });
    const after = await api('GET', `/v1/authorizations/${auth.id}`);
    expect(after.body.state).toBe('voided');
    expect(after.body.capture).toBeNull();
    expect(
      await chain().readContract({
        address: dev().tokenAddress,
        abi: tokenAbi,
        functionName: 'authorizationState',
        args: [p.address, auth.authorization.nonce],
      }),
      'the nonce onchain',
    ).toBe(false);
  });
});

describe('void without a reason: 400 validation_error', () => {
  it.each([
    { name: 'no reason', body: {} },
    { name: 'blank reason', body: { reason: '   ' } },
    { name: 'reason not a string', body: { reason: 42 } },
  ])('$name', async ({ body }) => {
    const drafted = await draft('7');
    await expectNothingChanges({ payer: p.address, id: drafted.id }, async () => {
      const res = await api('POST', `/v1/authorizations/${drafted.id}/void`, body);
      expectApiError(res, 400, 'validation_error', /reason/);
    });
    const after = await api('GET', `/v1/authorizations/${drafted.id}`);
    expect(after.body.state).toBe('drafted');
    expect(after.body.void).toBeNull();
    await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'test cleanup' });
  });
});

describe('unknown ids and routes: 404', () => {
  it('GET "auth_nope"', async () => {
    await expectNothingChanges({ payer: p.address }, async () => {
      expectApiError(await api('GET', '/v1/authorizations/auth_nope'), 404, 'not_found', /auth_nope|no authorization/);
    });
  });

  it('GET a well-formed id for an order that was never created', async () => {
    const id = resourceId(newOrderId('ghost'), randomUUID());
    await expectNothingChanges({ payer: p.address }, async () => {
      expectApiError(await api('GET', `/v1/authorizations/${id}`), 404, 'not_found', /no authorization/);
    });
  });

  it('GET a well-formed id naming a real order but a run that does not exist', async () => {
    const drafted = await draft('7.5');
    const id = resourceId(drafted.orderId, randomUUID());
    expect(id).not.toBe(drafted.id);
    await expectNothingChanges({ payer: p.address, id: drafted.id }, async () => {
      expectApiError(await api('GET', `/v1/authorizations/${id}`), 404, 'not_found', /no authorization/);
    });
    await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'test cleanup' });
  });

  it('capture on an unknown id', async () => {
    const id = resourceId(newOrderId('ghost'), randomUUID());
    await expectNothingChanges({ payer: p.address, settleMs: 1000 }, async () => {
      expectApiError(await api('POST', `/v1/authorizations/${id}/capture`), 404, 'not_found');
    });
  });

  it.each([
    { method: 'GET', path: '/v1/nope' },
    { method: 'POST', path: '/v1/authorizations/auth_x/refund' },
    { method: 'GET', path: '/v2/authorizations' },
  ])('$method $path', async ({ method, path }) => {
    await expectNothingChanges({ payer: p.address }, async () => {
      expectApiError(await api(method, path, method === 'GET' ? undefined : {}), 404, 'not_found', /no route/);
    });
  });
});

describe('one open authorization per order', () => {
  it('refuses a second create while open (409 with the open id), and allows a fresh attempt after void', async () => {
    const orderId = newOrderId('dup');
    const first = await draft('8', orderId);

    await expectNothingChanges({ payer: p.address, id: first.id }, async () => {
      const res = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '9' });
      expectApiError(res, 409, 'order_has_open_authorization', new RegExp(orderId));
      expect(res.body.error.details?.id).toBe(first.id);
    });

    const voided = await api('POST', `/v1/authorizations/${first.id}/void`, { reason: 'payer asked for a new amount' });
    expect(voided.status).toBe(200);
    expect(voided.body.state).toBe('voided');

    const second = await api('POST', '/v1/authorizations', { orderId, payer: p.address, amount: '9' });
    expect(second.status).toBe(201);
    expect(second.body.state).toBe('drafted');
    expect(second.body.orderId).toBe(orderId);
    expect(second.body.id).not.toBe(first.id);
    expect(second.body.authorization.nonce).toMatch(/^0x[0-9a-f]{64}$/);
    expect(second.body.authorization.nonce).not.toBe(first.authorization.nonce);
    expect(second.body.authorization.value).toBe('9000000');
    // The voided attempt stays readable under its own id.
    const old = await api('GET', `/v1/authorizations/${first.id}`);
    expect(old.body.state).toBe('voided');
    expect(old.body.authorization.nonce).toBe(first.authorization.nonce);
    await api('POST', `/v1/authorizations/${second.body.id}/void`, { reason: 'test cleanup' });
  });
});
