// The pure parts of issue 15's defence: who signed (without the chain), the attempt budget, the
// API's memory of a spent budget, and the worker's tracking of failing workflow tasks.
import { describe, expect, it } from 'vitest';
import { hashTypedData, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { AuthcapError } from '../../domain/errors.js';
import { authorizationTypes, cancelAuthorizationTypes, authorizationMessageValues, type AuthorizationMessage, type TokenDomain } from '../../domain/eip3009.js';
import { authorizationDigest, cancelDigest, isEcdsaSignatureOf, recoverSigner } from '../../domain/signatureRecovery.js';
import { COOL_DOWN_SECONDS, FREE_FAILURES, recordFailure, secondsUntilAllowed, type AttemptBudgetState } from '../../workflows/attemptBudget.js';
import { RefusalCache } from '../../client/refusalCache.js';
import { TaskFailureTracker } from '../../worker/taskFailures.js';

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
