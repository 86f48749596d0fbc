// The contract-wallet lockout (security finding): whoever held a checkout link could spend an ERC-1271
// payer's attempt budget with five stranger signatures, after which the wallet owner's valid
// signature got 429 too_many_attempts until validBefore; only a plain ECDSA payer was exempt, and the
// cancel path had the same screen. Now the API has the chain judge a signature before it is sent:
// strangers are 422 and reach no workflow, and the wallet's own signature, marked as checked onchain,
// counts against a budget of its own that no stranger can touch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { parseUnits, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseResourceId } from '../../domain/ids.js';
import { FREE_FAILURES } from '../../workflows/attemptBudget.js';
import { api, chain, newOrderId, tokenBalance, walletSign } from '../support/api.js';
import { deployContractWallet, mintTokens } from '../support/contractWallet.js';
import { getAuthorization, nonceLogs, waitForState } from '../support/lifecycle.js';
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

/** The wallet's owner: an EOA that only signs, never holds tokens or sends transactions. */
const ownerKey = generatePrivateKey();
const owner = privateKeyToAccount(ownerKey);
/** Whoever holds the checkout link: any key but the owner's. */
const strangerKey = generatePrivateKey();
const ATTEMPTS = 1_000;

let wallet: Address;
let temporal: Client;

beforeAll(async () => {
  temporal = await connectTemporal();
  wallet = await deployContractWallet(owner.address);
  expect(await chain().getCode({ address: wallet })).toMatch(/^0x[0-9a-f]{10,}$/);
  await mintTokens(wallet, parseUnits('100', 6));
});
afterAll(async () => {
  closeFloodConnections();
  await temporal?.connection.close();
});

async function draftForWallet(amount: string) {
  const created = await api('POST', '/v1/authorizations', { orderId: newOrderId('erc1271-lockout'), payer: wallet, amount });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.authorization.from).toBe(wallet);
  return created.body;
}

/** The authorization's workflow, addressed as a client holding the codec keys would: past the API and its checks. */
function workflowOf(id: string) {
  return temporal.workflow.getHandle(parseResourceId(id)!.workflowId);
}

async function refusalOf(attempt: Promise<unknown>) {
  const err = (await attempt.then(
    () => undefined,
    (e: unknown) => e,
  )) as { cause?: { type?: string; details?: { retryAfterSeconds?: number }[] } } | undefined;
  return { type: err?.cause?.type, retryAfterSeconds: err?.cause?.details?.[0]?.retryAfterSeconds };
}

/** Spends the budget of unchecked attempts (`submitSignature` or `cancel`) with a stranger's signature, straight to the workflow. */
async function spendStrangerBudget(id: string, update: 'submitSignature' | 'cancel', wrong: string) {
  const handle = workflowOf(id);
  for (let i = 0; i < FREE_FAILURES; i += 1) {
    expect(await refusalOf(handle.executeUpdate(update, { args: [{ signature: wrong }] }))).toMatchObject({ type: 'invalid_signature' });
  }
  const spent = await refusalOf(handle.executeUpdate(update, { args: [{ signature: wrong }] }));
  expect(spent.type).toBe('too_many_attempts');
  expect(spent.retryAfterSeconds).toBeGreaterThan(0);
}

describe("a contract-wallet payer and a checkout link's holder", () => {
  it(`the wallet's signature and cancellation go through after ${ATTEMPTS} stranger attempts each through the checkout link; history stays bounded`, async () => {
    const drafted = await draftForWallet('5');
    const balance = await tokenBalance(wallet);
    const updatesBefore = await acceptedUpdates(temporal, drafted.id);
    // From 50 client addresses (the public rate limit is per address): every attempt is judged.
    const from = strangerAddresses(50);

    const signatureUrl = checkoutPostUrl(drafted.checkoutUrl, 'signature');
    const wrong = walletSign(drafted.typedData, strangerKey);
    const signatures = await flood(ATTEMPTS, 10, (i) => postFrom(from[i % from.length]!, signatureUrl, { signature: wrong }));
    expect(expectStrangerRefusals(signatures, ATTEMPTS), JSON.stringify(tally(signatures))).toBe(ATTEMPTS);
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(updatesBefore);
    expect(await signatureChecksInHistory(temporal, drafted.id)).toBe(0);

    // The owner signs for the wallet (its isValidSignature accepts the owner's key): stored at once.
    const signed = await postFrom(from[0]!, signatureUrl, { signature: walletSign(drafted.typedData, ownerKey) });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect(signed.body.state).toBe('stored');
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(updatesBefore + 1);

    const resource = await getAuthorization(drafted.id);
    expect(resource.cancelUrl).toEqual(expect.any(String));
    const cancelUrl = checkoutPostUrl(resource.cancelUrl, 'cancel');
    const wrongCancel = walletSign(resource.cancellationTypedData, strangerKey);
    const cancellations = await flood(ATTEMPTS, 10, (i) => postFrom(from[i % from.length]!, cancelUrl, { signature: wrongCancel }));
    expect(expectStrangerRefusals(cancellations, ATTEMPTS), JSON.stringify(tally(cancellations))).toBe(ATTEMPTS);
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(updatesBefore + 1);
    expect(await signatureChecksInHistory(temporal, drafted.id)).toBe(1);
    expect((await getAuthorization(drafted.id)).state).toBe('stored');

    // The owner's cancellation for the wallet: relayed and confirmed by the token's own log.
    const canceled = await postFrom(from[1]!, cancelUrl, { signature: walletSign(resource.cancellationTypedData, ownerKey) });
    expect([200, 202], JSON.stringify(canceled.body)).toContain(canceled.status);
    expect((await waitForState(drafted.id, 'canceled', 30_000)).state).toBe('canceled');
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(updatesBefore + 2);
    const logs = await nonceLogs(wallet, drafted.authorization.nonce);
    expect(logs.canceled.map((l) => l.args)).toEqual([{ authorizer: wallet, nonce: drafted.authorization.nonce }]);
    expect(logs.used).toEqual([]);
    expect(await tokenBalance(wallet)).toBe(balance);
  }, 300_000);
});

describe("a contract-wallet payer whose strangers' budget was spent straight at the workflow", () => {
  it('still has its signature accepted once the chain vouched for it (checkedOnchain)', async () => {
    const drafted = await draftForWallet('3');
    const handle = workflowOf(drafted.id);
    const before = await acceptedUpdates(temporal, drafted.id);
    // A client holding the codec keys sends strangers' signatures unchecked: they spend the budget of unchecked attempts.
    await spendStrangerBudget(drafted.id, 'submitSignature', walletSign(drafted.typedData, strangerKey));
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(before + FREE_FAILURES);

    const ownerSignature = walletSign(drafted.typedData, ownerKey);
    // Sent unchecked, the wallet's signature meets that spent budget (what a client without a node gets).
    expect((await refusalOf(handle.executeUpdate('submitSignature', { args: [{ signature: ownerSignature }] }))).type).toBe('too_many_attempts');
    // Checked onchain first, it counts against the wallet's own budget, which no stranger touched: stored.
    const view = (await handle.executeUpdate('submitSignature', { args: [{ signature: ownerSignature, checkedOnchain: true }] })) as { state: string };
    expect(view.state).toBe('stored');
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(before + FREE_FAILURES + 1);
    expect((await api('POST', `/v1/authorizations/${drafted.id}/void`, { reason: 'test done' })).status).toBe(200);
  }, 120_000);

  it('still cancels through its checkout link: the API has the chain vouch for the cancellation before sending it', async () => {
    const drafted = await draftForWallet('2');
    const signed = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: walletSign(drafted.typedData, ownerKey) });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    const resource = await getAuthorization(drafted.id);
    const handle = workflowOf(drafted.id);
    const before = await acceptedUpdates(temporal, drafted.id);
    await spendStrangerBudget(drafted.id, 'cancel', walletSign(resource.cancellationTypedData, strangerKey));
    const ownerCancel = walletSign(resource.cancellationTypedData, ownerKey);
    expect((await refusalOf(handle.executeUpdate('cancel', { args: [{ signature: ownerCancel }] }))).type).toBe('too_many_attempts');
    expect(await acceptedUpdates(temporal, drafted.id)).toBe(before + FREE_FAILURES);

    const canceled = await postFrom(strangerAddresses(1)[0]!, checkoutPostUrl(resource.cancelUrl, 'cancel'), { signature: ownerCancel });
    expect([200, 202], JSON.stringify(canceled.body)).toContain(canceled.status);
    expect((await waitForState(drafted.id, 'canceled', 30_000)).state).toBe('canceled');
    const logs = await nonceLogs(wallet, drafted.authorization.nonce);
    expect(logs.canceled).toHaveLength(1);
    expect(logs.used).toEqual([]);
  }, 120_000);
});
