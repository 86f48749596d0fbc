// The pure parts of issue 15's defence: who signed (without the chain), the attempt budget and the
// budget a signature counts against, the caller's check before sending (without asking the node for
// the payer's own signature), the API's memory of a spent budget, and the worker's tracking of
// failing workflow tasks.
import { describe, expect, it } from 'vitest';
import { hashTypedData, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { AuthcapError } from '../../../domain/errors.js';
import {
  authorizationTypes,
  cancelAuthorizationTypes,
  authorizationMessageValues,
  type AuthorizationMessage,
  type TokenDomain,
} from '../../../domain/eip3009.js';
import { authorizationDigest, cancelDigest, isEcdsaSignatureOf, recoverSigner } from '../../../domain/signatureRecovery.js';
import {
  COOL_DOWN_SECONDS,
  FREE_FAILURES,
  recordFailure,
  secondsUntilAllowed,
  signatureAttemptKind,
  type AttemptBudgetState,
} from '../../../workflows/attemptBudget.js';
import { RefusalCache } from '../../../client/authorizations/refusalCache.js';
import { SignatureChecker } from '../../../client/authorizations/signatureCheck.js';
import { freePort } from '../../../devstack/process.js';
import { TaskFailureTracker } from '../../../worker/taskFailures.js';

const payer = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const stranger = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
const domain: TokenDomain = { name: 'USD Coin', version: '2', chainId: 31337, verifyingContract: '0x5FbDB2315678afecb367f032d93F642f64180aa3' };
const authorization: AuthorizationMessage = {
  from: payer.address,
  to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  value: '1000000',
  validAfter: '0',
  validBefore: '4102444800',
  nonce: `0x${'ab'.repeat(32)}`,
};
const sign = (account: typeof payer) =>
  account.signTypedData({
    domain,
    types: authorizationTypes,
    primaryType: 'ReceiveWithAuthorization',
    message: authorizationMessageValues(authorization),
  });

describe('recoverSigner', () => {
  it('names the key that made a wallet signature, over the same digest viem hashes', async () => {
    const digest = authorizationDigest(domain, 'ReceiveWithAuthorization', authorization);
    expect(digest).toBe(
      hashTypedData({ domain, types: authorizationTypes, primaryType: 'ReceiveWithAuthorization', message: authorizationMessageValues(authorization) }),
    );
    expect(recoverSigner(digest, await sign(payer))).toBe(payer.address);
    expect(isEcdsaSignatureOf(digest, await sign(payer), payer.address)).toBe(true);
    expect(isEcdsaSignatureOf(digest, await sign(stranger), payer.address)).toBe(false);
    // The other primary type is another digest: a TransferWithAuthorization signature is not this one's.
    expect(isEcdsaSignatureOf(authorizationDigest(domain, 'TransferWithAuthorization', authorization), await sign(payer), payer.address)).toBe(false);
  });

  it('works for cancellations, with v as 0/1 as well as 27/28', async () => {
    const message = { authorizer: payer.address, nonce: authorization.nonce };
    const signature = await payer.signTypedData({ domain, types: cancelAuthorizationTypes, primaryType: 'CancelAuthorization', message });
    const digest = cancelDigest(domain, payer.address, authorization.nonce);
    expect(recoverSigner(digest, signature)).toBe(payer.address);
    const v = Number.parseInt(signature.slice(130), 16);
    expect(recoverSigner(digest, `${signature.slice(0, 130)}0${v - 27}` as Hex)).toBe(payer.address);
  });

  it.each([
    ['empty', '0x'],
    ['too short', `0x${'11'.repeat(64)}`],
    ["too long (a contract wallet's)", `0x${'11'.repeat(200)}`],
    ['v out of range', `0x${'11'.repeat(64)}05`],
    ['r and s zero', `0x${'00'.repeat(64)}1b`],
    ['not hex', `0x${'zz'.repeat(65)}`],
  ])('is undefined for what is no ECDSA signature: %s', (_name, signature) => {
    expect(recoverSigner(authorizationDigest(domain, 'ReceiveWithAuthorization', authorization), signature as Hex)).toBeUndefined();
  });
});

describe('the attempt budget', () => {
  it(`allows ${FREE_FAILURES} failures, then one attempt per ${COOL_DOWN_SECONDS} s after the last`, () => {
    let state: AttemptBudgetState = {};
    const t0 = 1_000_000;
    for (let i = 0; i < FREE_FAILURES; i += 1) {
      expect(secondsUntilAllowed(state, 'signature', t0)).toBe(0);
      state = recordFailure(state, 'signature', t0);
    }
    expect(secondsUntilAllowed(state, 'signature', t0)).toBe(COOL_DOWN_SECONDS);
    expect(secondsUntilAllowed(state, 'signature', t0 + 59_001)).toBe(1);
    expect(secondsUntilAllowed(state, 'signature', t0 + COOL_DOWN_SECONDS * 1000)).toBe(0);
    // Each kind has its own budget.
    expect(secondsUntilAllowed(state, 'capture', t0)).toBe(0);
    state = recordFailure(state, 'signature', t0 + 60_000);
    expect(secondsUntilAllowed(state, 'signature', t0 + 60_000)).toBe(COOL_DOWN_SECONDS);
  });
});

describe('signatureAttemptKind', () => {
  it('counts a signature the caller had the chain vouch for against a budget of its own', () => {
    expect(signatureAttemptKind('signature', { signature: '0x11' })).toBe('signature');
    expect(signatureAttemptKind('cancel', { signature: '0x11' })).toBe('cancel');
    expect(signatureAttemptKind('signature', { signature: '0x11', checkedOnchain: true })).toBe('checkedSignature');
    expect(signatureAttemptKind('cancel', { signature: '0x11', checkedOnchain: true })).toBe('checkedCancel');
  });

  it.each([
    ['false', { checkedOnchain: false }],
    ['the string "true"', { checkedOnchain: 'true' }],
    ['1', { checkedOnchain: 1 }],
    ['an object', { checkedOnchain: {} }],
    ['no request', undefined],
    ['null', null],
  ])('takes only the literal true as the mark, not %s', (_name, request) => {
    expect(signatureAttemptKind('signature', request)).toBe('signature');
    expect(signatureAttemptKind('cancel', request)).toBe('cancel');
  });

  it("keeps the strangers' budget and the vouched-for one apart", () => {
    const t0 = 1_000_000;
    let state: AttemptBudgetState = {};
    for (let i = 0; i < FREE_FAILURES; i += 1) state = recordFailure(state, signatureAttemptKind('signature', { signature: '0x11' }), t0);
    expect(secondsUntilAllowed(state, 'signature', t0)).toBe(COOL_DOWN_SECONDS);
    expect(secondsUntilAllowed(state, signatureAttemptKind('signature', { signature: '0x11', checkedOnchain: true }), t0)).toBe(0);
    expect(secondsUntilAllowed(state, signatureAttemptKind('cancel', { signature: '0x11', checkedOnchain: true }), t0)).toBe(0);
    for (let i = 0; i < FREE_FAILURES; i += 1) state = recordFailure(state, 'checkedCancel', t0);
    expect(secondsUntilAllowed(state, 'checkedCancel', t0)).toBe(COOL_DOWN_SECONDS);
    expect(secondsUntilAllowed(state, 'checkedSignature', t0)).toBe(0);
    expect(secondsUntilAllowed(state, 'cancel', t0)).toBe(0);
  });
});

describe('SignatureChecker', () => {
  const subject = { domain, primaryType: 'ReceiveWithAuthorization' as const, authorization };
  /** A node that is not there: any question to it fails. */
  const nowhere = async () => `http://127.0.0.1:${await freePort()}`;

  it("judges the payer's own ECDSA signature without asking the node", async () => {
    const checker = new SignatureChecker(await nowhere());
    expect(await checker.check('signature', subject, await sign(payer))).toBe('payer');
    const cancel = await payer.signTypedData({
      domain,
      types: cancelAuthorizationTypes,
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer.address, nonce: authorization.nonce },
    });
    expect(await checker.check('cancel', subject, cancel)).toBe('payer');
  });

  it('fails closed when the node cannot answer, as chain_unavailable (503), never as an invalid signature', async () => {
    const checker = new SignatureChecker(await nowhere());
    // Nothing but the payer's own signature gets through, and a genuine contract wallet's signature is
    // not told it is invalid because the node was down (viem's verifyTypedData would answer false).
    const refused = expect.objectContaining({ code: 'chain_unavailable' });
    await expect(checker.check('signature', subject, await sign(stranger))).rejects.toEqual(refused);
    // The payer's signature over the draft is no cancellation: that one needs the chain too.
    await expect(checker.check('cancel', subject, await sign(payer))).rejects.toEqual(refused);
  });
});

describe('RefusalCache', () => {
  const refused = new AuthcapError('too_many_attempts', 'this authorization refused 5 signatures; try again in 60 s', { retryAfterSeconds: 60 });

  it("answers a spent budget from memory until the cool-down ends, but lets the payer's own signature through", async () => {
    let now = 0;
    const cache = new RefusalCache(() => now);
    const digest = authorizationDigest(domain, 'ReceiveWithAuthorization', authorization);
    const [theirs, ours] = [await sign(stranger), await sign(payer)];
    cache.remember('auth_1', 'signature', refused, { digest, signer: payer.address });
    expect(() => cache.screen('auth_1', 'signature', theirs)).toThrow(
      expect.objectContaining({ code: 'too_many_attempts', details: { retryAfterSeconds: 60 } }),
    );
    expect(() => cache.screen('auth_1', 'signature', ours)).not.toThrow();
    expect(() => cache.screen('auth_2', 'signature', theirs)).not.toThrow();
    now = 30_000;
    expect(() => cache.screen('auth_1', 'signature', theirs)).toThrow(expect.objectContaining({ details: { retryAfterSeconds: 30 } }));
    now = 60_000;
    expect(() => cache.screen('auth_1', 'signature', theirs)).not.toThrow();
  });

  it('keeps no signature refusal it could not tell the payer apart for', async () => {
    const cache = new RefusalCache(() => 0);
    cache.remember('auth_1', 'signature', refused);
    expect(() => cache.screen('auth_1', 'signature', `0x${'11'.repeat(65)}`)).not.toThrow();
    cache.remember('auth_1', 'capture', refused);
    expect(() => cache.screen('auth_1', 'capture')).toThrow(AuthcapError);
  });
});

describe('TaskFailureTracker', () => {
  // The worker's own report of a failed activation, as the SDK logs it (seen on SDK 1.24).
  const failed = (workflowId: string, runId = `${workflowId}-run`) =>
    [
      'WARN',
      'Workflow failed',
      {
        sdkComponent: 'worker',
        taskQueue: 'authcap',
        namespace: 'default',
        workflowId,
        runId,
        workflowType: 'authorizationWorkflow',
        error: {},
      },
    ] as const;

  it('lists a workflow whose tasks keep failing, says so once loudly, and forgets it when the failures stop', () => {
    let now = 0;
    const reports: Record<string, unknown>[] = [];
    const tracker = new TaskFailureTracker(
      (_message, meta) => reports.push(meta),
      () => now,
    );
    tracker.observe(...failed('authorization-a'));
    expect(tracker.failing()).toMatchObject([{ workflowId: 'authorization-a', failures: 1 }]);
    expect(reports).toEqual([]);
    now = 10_000;
    tracker.observe(...failed('authorization-a'));
    now = 20_000;
    tracker.observe(...failed('authorization-a'));
    expect(tracker.failing()).toMatchObject([{ workflowId: 'authorization-a', failures: 3 }]);
    expect(reports).toMatchObject([{ workflowId: 'authorization-a', failures: 2 }]);
    // Other log lines are not failures.
    tracker.observe('WARN', 'Workflow failed', { sdkComponent: 'activity', workflowId: 'x' });
    tracker.observe('INFO', 'Worker state changed', { sdkComponent: 'worker' });
    expect(tracker.failing()).toHaveLength(1);
    now = 20_000 + 3 * 60_000;
    expect(tracker.failing()).toEqual([]);
  });
});
