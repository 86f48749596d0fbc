// Issue 35: sealed payloads COPIED from one workflow's history to another. A Temporal client without
// the codec key cannot make a sealed payload, but it can read every one in history and send it again
// somewhere else, byte for byte. Sealing proves who made a payload, so each payload must also say
// where it belongs: a copy sent to another authorization, or as another message, is refused (an
// update) or dropped (a signal), and nothing moves. Checked from the API and the chain.
//
// The attacker here is `keyless`: a Temporal client with no data converter, reading histories with
// getWorkflowExecutionHistory and sending the copies with raw workflowService calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { newOrderId } from '../support/api.js';
import { connectTemporal, connectTemporalWithoutKeys } from '../support/temporal.js';
import { acceptedUpdates, historyEventTypes } from '../support/forgedInputs.js';
import { authorizationMessage, ethersSign, sleep, tokenDomain } from '../support/lifecycle.js';
import {
  awaitStateChange,
  call,
  captureIn,
  expectMoneyMoved,
  getAuthorizationIn,
  mark,
  newPayer,
  sharedWorld,
  storedIn,
  tokens,
  type World,
} from '../support/refunds.js';
import { copiedStartInput, copiedUpdateArgs, signalWithPayloads, updateWithPayloads, type Payload } from '../support/copiedPayloads.js';
import type { AuthorizationResource } from '../../domain/authorization.js';

let keyless: Client;
let operator: Client;
let world: World;

beforeAll(async () => {
  keyless = await connectTemporalWithoutKeys();
  operator = await connectTemporal();
  world = sharedWorld();
});
afterAll(async () => {
  await keyless?.connection.close();
  await operator?.connection.close();
});

const workflowIdOf = (resource: { orderId: string }) => `authorization-${resource.orderId}`;

/** A stored authorization of a payer of the test's own (its balance exact), never captured. */
async function freshStored(amount: string) {
  const p = await newPayer(world, tokens('50'));
  const resource = await storedIn(world, p, amount);
  return { p, resource };
}

/**
 * After a copy was sent to `target`: give a capture it may have started the time to end (so the
 * chain shows all it did), then the authorization as the API reads it.
 */
async function settle(target: AuthorizationResource): Promise<AuthorizationResource> {
  await sleep(2_500);
  const now = await getAuthorizationIn(world, target.id);
  return now.state === 'capturing' ? awaitStateChange(world, target.id, 'capturing', 30_000) : now;
}

/** `target` is still stored, as it was: nothing captured, voided or recorded on it. */
function expectUntouched(after: AuthorizationResource, before: AuthorizationResource, what: string) {
  expect.soft(after.state, `${what}: the authorization's state (API)`).toBe('stored');
  expect.soft(after.void, `${what}: a void recorded on it`).toBeNull();
  expect.soft(after.capture, `${what}: a capture recorded on it`).toBeNull();
  expect.soft(after.amountCaptured, `${what}: amountCaptured`).toBe(before.amountCaptured);
  expect
    .soft(
      after.history.map((h) => h.state),
      `${what}: its history`,
    )
    .toEqual(before.history.map((h) => h.state));
}

describe('a capture update copied from another authorization', () => {
  it('is refused by another stored authorization: it stays stored, its payer is not charged, the merchant gets nothing of it, no update is accepted', async () => {
    // A: 5.00, partially captured (0.01) through the API: its history holds a sealed capture update.
    const { resource: a } = await freshStored('5');
    await captureIn(world, a.id, { amount: '0.01' });
    const copied = await copiedUpdateArgs(keyless, workflowIdOf(a), 'capture');

    // B: 5.00 of another payer, signed and stored, never captured.
    const { p: payerB, resource: b } = await freshStored('5');
    const since = await mark(world, payerB.address);
    const updatesBefore = acceptedUpdates(await historyEventTypes(operator, workflowIdOf(b)));

    const outcome = await updateWithPayloads(keyless, workflowIdOf(b), 'capture', copied);
    const after = await settle(b);

    expectUntouched(after, b, "B after A's copied capture update");
    expect.soft(outcome, 'the copied capture update, as the client sees it').toMatchObject({ accepted: false, failureType: 'unauthenticated_input' });
    expect.soft(acceptedUpdates(await historyEventTypes(operator, workflowIdOf(b))), "updates B's history accepted").toBe(updatesBefore);
    // The chain: B's payer paid nothing, and the merchant received nothing from them.
    await expectMoneyMoved(world, since, { payer: 0n, merchant: 0n });
  });
});

describe('a copy sent to another authorization as its `void` signal', () => {
  it('a void copied from a voided authorization does not void another one (the signal is dropped)', async () => {
    const { resource: voided } = await freshStored('0.10');
    const res = await call(world, 'POST', `/v1/authorizations/${voided.id}/void`, { reason: 'order canceled by the customer' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.state).toBe('voided');
    const copied = await copiedUpdateArgs(keyless, workflowIdOf(voided), 'void');

    const { p: payerB, resource: b } = await freshStored('5');
    const since = await mark(world, payerB.address);
    await signalWithPayloads(keyless, workflowIdOf(b), 'void', copied);
    const after = await settle(b);

    expectUntouched(after, b, "B after a voided authorization's copied void");
    await expectMoneyMoved(world, since, { payer: 0n, merchant: 0n });
  });

  /** Sealed payloads of other messages, each copied from a real authorization's history. */
  const sources: [string, () => Promise<Payload[]>][] = [
    [
      "a payer's signature (the submitSignature update of another authorization)",
      async () => {
        const { resource } = await freshStored('0.10');
        return copiedUpdateArgs(keyless, workflowIdOf(resource), 'submitSignature');
      },
    ],
    [
      "a pre-signed authorization (another authorization workflow's start input)",
      async () => {
        const p = await newPayer(world, tokens('5'));
        const authorization = authorizationMessage(p.address, 100_000n);
        const signature = await ethersSign('TransferWithAuthorization', await tokenDomain(), authorization, p.privateKey);
        const orderId = newOrderId('copied-presigned');
        const res = await call(world, 'POST', '/v1/authorizations', { orderId, primaryType: 'TransferWithAuthorization', authorization, signature });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        return copiedStartInput(keyless, `authorization-${orderId}`);
      },
    ],
    [
      "a capture (another authorization's capture update)",
      async () => {
        const { resource } = await freshStored('0.10');
        await captureIn(world, resource.id);
        return copiedUpdateArgs(keyless, workflowIdOf(resource), 'capture');
      },
    ],
  ];

  it.each(sources)('%s does not void another authorization', async (what, copy) => {
    const copied = await copy();
    const { p: payerB, resource: b } = await freshStored('5');
    const since = await mark(world, payerB.address);
    await signalWithPayloads(keyless, workflowIdOf(b), 'void', copied);
    const after = await settle(b);

    expectUntouched(after, b, `B after ${what}, copied as its void signal`);
    await expectMoneyMoved(world, since, { payer: 0n, merchant: 0n });
  });
});
