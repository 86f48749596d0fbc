// The stored state: capture prechecks (every guard, both branches), payer cancellation, void,
// the deadline and nonces consumed onchain by someone else.
import { describe, it, expect } from 'vitest';
import type { CapturePrecheckFacts } from '../../../domain/facts.js';
import type { ErrorCode } from '../../../domain/errors.js';
import {
  BLOCK_HASH,
  OTHER_TX,
  SIGNATURE,
  VALID_AFTER,
  VALID_BEFORE,
  VALUE,
  at,
  consumption,
  goodFacts,
  send,
  toPrechecking,
  toStored,
  toVerifyingCancellation,
  type Snapshot,
} from './machineFixtures.js';

function precheck(facts: CapturePrecheckFacts, from: Snapshot = toPrechecking()): Snapshot {
  return send(from, { type: 'PRECHECKED', at: at(20), facts });
}

describe('stored.idle', () => {
  it('CAPTURE_REQUESTED → stored.prechecking, context unchanged', () => {
    const before = toStored();
    const after = send(before, { type: 'CAPTURE_REQUESTED', at: at(4) });
    expect(after.value).toEqual({ stored: 'prechecking' });
    expect(after.context).toEqual(before.context);
  });

  it('CANCEL_REQUESTED → stored.verifyingCancellation, context unchanged', () => {
    const before = toStored();
    const after = send(before, { type: 'CANCEL_REQUESTED', at: at(4) });
    expect(after.value).toEqual({ stored: 'verifyingCancellation' });
    expect(after.context).toEqual(before.context);
  });
});

describe('PRECHECKED', () => {
  it('with every fact good → capturing.submitting, nothing recorded', () => {
    const before = toPrechecking();
    const after = precheck(goodFacts(), before);
    expect(after.value).toEqual({ capturing: 'submitting' });
    expect(after.context).toEqual(before.context);
  });

  it('passes with the payer balance exactly equal to the value', () => {
    expect(precheck(goodFacts({ payerBalance: VALUE })).value).toEqual({ capturing: 'submitting' });
  });

  it('passes with the merchant gas balance exactly equal to the required gas', () => {
    expect(precheck(goodFacts({ merchantGasBalance: '777', requiredGas: '777' })).value).toEqual({ capturing: 'submitting' });
  });

  it('passes one second inside each end of the validity window', () => {
    expect(precheck(goodFacts({ chainTime: (VALID_AFTER + 1n).toString() })).value).toEqual({ capturing: 'submitting' });
    expect(precheck(goodFacts({ chainTime: (VALID_BEFORE - 1n).toString() })).value).toEqual({ capturing: 'submitting' });
  });

  const failures: [string, Partial<CapturePrecheckFacts>, ErrorCode][] = [
    ['the nonce is already used', { authorizationUsed: true }, 'nonce_already_used'],
    ['the token is paused', { paused: true }, 'token_policy_blocked'],
    ['the payer is blacklisted', { payerBlacklisted: true }, 'token_policy_blocked'],
    ['the merchant is blacklisted', { merchantBlacklisted: true }, 'token_policy_blocked'],
    ['chain time equals validAfter (the window is strict)', { chainTime: VALID_AFTER.toString() }, 'authorization_not_yet_valid'],
    ['chain time is before validAfter', { chainTime: (VALID_AFTER - 30n).toString() }, 'authorization_not_yet_valid'],
    ['the payer balance is one unit short', { payerBalance: (BigInt(VALUE) - 1n).toString() }, 'insufficient_balance'],
    ['the payer balance is zero', { payerBalance: '0' }, 'insufficient_balance'],
    ['the merchant cannot pay for gas', { merchantGasBalance: '999', requiredGas: '1000' }, 'insufficient_merchant_gas'],
  ];

  for (const [why, overrides, code] of failures) {
    it(`fails when ${why}: back to stored.idle with lastError ${code}, nothing else changed`, () => {
      const before = toPrechecking();
      const after = precheck(goodFacts(overrides), before);
      expect(after.value).toEqual({ stored: 'idle' });
      expect(after.status).toBe('active');
      expect(after.context.lastError).toEqual({ code, message: expect.any(String), at: at(20) });
      expect(after.context.lastError?.message.length).toBeGreaterThan(0);
      expect({ ...after.context, lastError: null }).toEqual(before.context);
    });
  }

  it('after a failed precheck a capture can be requested again and succeed', () => {
    const failed = precheck(goodFacts({ paused: true }));
    expect(failed.can({ type: 'CAPTURE_REQUESTED', at: at(21) })).toBe(true);
    const retried = precheck(goodFacts(), toPrechecking(failed));
    expect(retried.value).toEqual({ capturing: 'submitting' });
  });

  it('reports the token-order reason when several facts fail (paused before balance)', () => {
    const after = precheck(goodFacts({ paused: true, payerBalance: '0', merchantGasBalance: '0' }));
    expect(after.context.lastError?.code).toBe('token_policy_blocked');
  });

  for (const [why, chainTime] of [
    ['equals validBefore', VALID_BEFORE],
    ['is after validBefore', VALID_BEFORE + 60n],
  ] as const) {
    it(`chain time ${why} → expired (final) with lastError authorization_expired`, () => {
      const after = precheck(goodFacts({ chainTime: chainTime.toString() }));
      expect(after.value).toBe('expired');
      expect(after.status).toBe('done');
      expect(after.context.lastError).toEqual({ code: 'authorization_expired', message: expect.any(String), at: at(20) });
    });
  }

  it('a passed deadline wins over other failing facts', () => {
    const after = precheck(goodFacts({ chainTime: VALID_BEFORE.toString(), paused: true, payerBalance: '0' }));
    expect(after.value).toBe('expired');
  });

  // design.md: expired means "the deadline passed, nonce still unused onchain"; `authorizationUsed`
  // is true for used AND canceled nonces. A precheck that sees the nonce consumed must not settle the
  // authorization as expired: only the logs (DEADLINE_REACHED / NONCE_CONSUMED_ONCHAIN) can say
  // whether it was captured or canceled. The machine checks `deadlineHasPassed` before anything else.
  it('a past-deadline precheck that sees the nonce consumed does not finalize as expired', () => {
    const after = precheck(goodFacts({ chainTime: VALID_BEFORE.toString(), authorizationUsed: true }));
    expect(after.matches('expired')).toBe(false);
  });
});

describe('stored.verifyingCancellation', () => {
  it('a valid CANCEL_SIGNATURE_CHECKED → canceling, context unchanged', () => {
    const before = toVerifyingCancellation();
    const after = send(before, { type: 'CANCEL_SIGNATURE_CHECKED', at: at(5), check: { valid: true } });
    expect(after.value).toBe('canceling');
    expect(after.context).toEqual(before.context);
  });

  it('an invalid CANCEL_SIGNATURE_CHECKED → back to stored.idle, context unchanged', () => {
    const before = toVerifyingCancellation();
    const after = send(before, {
      type: 'CANCEL_SIGNATURE_CHECKED',
      at: at(5),
      check: { valid: false, code: 'invalid_signature', reason: 'not the payer' },
    });
    expect(after.value).toEqual({ stored: 'idle' });
    expect(after.context).toEqual(before.context);
  });
});

const storedSubstates: [string, () => Snapshot][] = [
  ['idle', toStored],
  ['prechecking', () => toPrechecking()],
  ['verifyingCancellation', toVerifyingCancellation],
];

describe('stored: VOID, DEADLINE_REACHED and NONCE_CONSUMED_ONCHAIN (from every substate)', () => {
  it('VOID is refused while a capture is prechecked or a cancellation verified: the command finishes first', () => {
    for (const make of [() => toPrechecking(), toVerifyingCancellation]) {
      const snapshot = make();
      const event = { type: 'VOID', at: at(30), reason: 'order canceled', by: 'ops' } as const;
      expect(snapshot.can(event)).toBe(false);
      expect(send(snapshot, event).value).toEqual(snapshot.value);
    }
  });

  for (const [name, make] of storedSubstates) {
    if (name !== 'idle') continue;
    it(`VOID from stored.${name} → voided with the void record, signature kept`, () => {
      const snapshot = send(make(), { type: 'VOID', at: at(30), reason: 'order canceled', by: 'operator@example.com' });
      expect(snapshot.value).toBe('voided');
      expect(snapshot.status).toBe('done');
      expect(snapshot.context.void).toEqual({ reason: 'order canceled', by: 'operator@example.com', at: at(30) });
      expect(snapshot.context.signature).toBe(SIGNATURE);
      expect(snapshot.context.capture).toBeNull();
      expect(snapshot.context.cancellation).toBeNull();
    });

    it(`DEADLINE_REACHED from stored.${name} with the nonce unused → expired`, () => {
      const snapshot = send(make(), { type: 'DEADLINE_REACHED', at: at(30), onchain: { status: 'unused' } });
      expect(snapshot.value).toBe('expired');
      expect(snapshot.status).toBe('done');
      expect(snapshot.context.lastError).toEqual({ code: 'authorization_expired', message: expect.any(String), at: at(30) });
      expect(snapshot.context.capture).toBeNull();
      expect(snapshot.context.cancellation).toBeNull();
    });

    it(`DEADLINE_REACHED from stored.${name} with the nonce used onchain → captured by 'onchain'`, () => {
      const snapshot = send(make(), { type: 'DEADLINE_REACHED', at: at(30), onchain: consumption('used', OTHER_TX) });
      expect(snapshot.value).toBe('captured');
      expect(snapshot.status).toBe('done');
      expect(snapshot.context.capture).toEqual({
        transactionHash: OTHER_TX,
        blockNumber: '4242',
        blockHash: BLOCK_HASH,
        submittedAt: null,
        preconfirmedAt: at(30),
        confirmedAt: at(30),
        by: 'onchain',
        amount: '12.5',
      });
      expect(snapshot.context.cancellation).toBeNull();
    });

    it(`DEADLINE_REACHED from stored.${name} with the nonce canceled onchain → canceled by 'onchain'`, () => {
      const snapshot = send(make(), { type: 'DEADLINE_REACHED', at: at(30), onchain: consumption('canceled', OTHER_TX) });
      expect(snapshot.value).toBe('canceled');
      expect(snapshot.status).toBe('done');
      expect(snapshot.context.cancellation).toEqual({ transactionHash: OTHER_TX, blockNumber: '4242', at: at(30), by: 'onchain' });
      expect(snapshot.context.capture).toBeNull();
    });

    it(`NONCE_CONSUMED_ONCHAIN (used) from stored.${name} → captured by 'onchain'`, () => {
      const snapshot = send(make(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(31), onchain: consumption('used', OTHER_TX) });
      expect(snapshot.value).toBe('captured');
      expect(snapshot.context.capture).toMatchObject({ transactionHash: OTHER_TX, blockNumber: '4242', by: 'onchain', confirmedAt: at(31) });
    });

    it(`NONCE_CONSUMED_ONCHAIN (canceled) from stored.${name} → canceled by 'onchain'`, () => {
      const snapshot = send(make(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(31), onchain: consumption('canceled', OTHER_TX) });
      expect(snapshot.value).toBe('canceled');
      expect(snapshot.context.cancellation).toEqual({ transactionHash: OTHER_TX, blockNumber: '4242', at: at(31), by: 'onchain' });
    });
  }
});
