// The authorization machine (workflows/machine.ts): drafting and signing, the full table of which
// events each state accepts, and final states. Stored/capturing/canceling are in the sibling files.
import { describe, it, expect } from 'vitest';
import { initialTransition } from 'xstate';
import { authorizationMachine } from '../../../workflows/machine.js';
import {
  BLOCK_HASH,
  OTHER_TX,
  SIGNATURE,
  acceptedEventTypes,
  allEventTypes,
  at,
  authorization,
  consumption,
  domain,
  expectUnchanged,
  input,
  run,
  sampleEvents,
  send,
  start,
  toCanceling,
  toDrafted,
  toPrechecking,
  toPreconfirmed,
  toStored,
  toSubmitted,
  toSubmitting,
  toVerifyingCancellation,
  toVerifyingSignature,
  type EventType,
  type Snapshot,
} from './machineFixtures.js';

const emptyRecords = {
  domain: null,
  authorization: null,
  signature: null,
  capture: null,
  cancellation: null,
  void: null,
  lastError: null,
  captureAmount: null,
  release: null,
};

describe('initial state', () => {
  it('starts in drafting with the input copied into an otherwise empty context', () => {
    const [snapshot, actions] = initialTransition(authorizationMachine, input);
    expect(snapshot.value).toBe('drafting');
    expect(snapshot.status).toBe('active');
    expect(snapshot.context).toEqual({ ...input, ...emptyRecords });
    expect(actions).toEqual([]);
  });
});

describe('drafting', () => {
  it('DRAFTED moves to drafted.awaitingSignature and records the domain and authorization', () => {
    const snapshot = send(start(), { type: 'DRAFTED', at: at(1), domain, authorization });
    expect(snapshot.value).toEqual({ drafted: 'awaitingSignature' });
    expect(snapshot.matches('drafted')).toBe(true);
    expect(snapshot.context.domain).toEqual(domain);
    expect(snapshot.context.authorization).toEqual(authorization);
    expect(snapshot.context).toEqual({ ...input, ...emptyRecords, domain, authorization });
  });

  it('COMMAND_FAILED (the draft could not be made) moves to the final rejected state with why', () => {
    const failure = { code: 'chain_unavailable' as const, message: 'the chain did not answer in time; try again' };
    const snapshot = send(start(), { type: 'COMMAND_FAILED', at: at(1), failure });
    expect(snapshot.value).toBe('rejected');
    expect(snapshot.status).toBe('done');
    expect(snapshot.context.lastError).toEqual({ ...failure, at: at(1) });
    expect(snapshot.context.authorization).toBeNull();
  });

  it('VOID moves to the final voided state with a void record', () => {
    const snapshot = send(start(), { type: 'VOID', at: at(1), reason: 'order canceled', by: 'order-service' });
    expect(snapshot.value).toBe('voided');
    expect(snapshot.status).toBe('done');
    expect(snapshot.context.void).toEqual({ reason: 'order canceled', by: 'order-service', at: at(1) });
    expect(snapshot.context.authorization).toBeNull();
  });

  it('a valid PRESIGNED_CHECKED skips drafted: stored.idle with domain, authorization and signature', () => {
    const snapshot = send(start(), {
      type: 'PRESIGNED_CHECKED',
      at: at(1),
      domain,
      authorization,
      signature: SIGNATURE,
      check: { valid: true },
    });
    expect(snapshot.value).toEqual({ stored: 'idle' });
    expect(snapshot.context).toEqual({ ...input, ...emptyRecords, domain, authorization, signature: SIGNATURE });
  });

  it('an invalid PRESIGNED_CHECKED → rejected (final), recording the check code and reason, storing nothing', () => {
    const snapshot = send(start(), {
      type: 'PRESIGNED_CHECKED',
      at: at(1),
      domain,
      authorization,
      signature: SIGNATURE,
      check: { valid: false, code: 'recipient_mismatch', reason: 'to is not the merchant' },
    });
    expect(snapshot.value).toBe('rejected');
    expect(snapshot.status).toBe('done');
    expect(snapshot.context).toEqual({
      ...input,
      ...emptyRecords,
      lastError: { code: 'recipient_mismatch', message: 'to is not the merchant', at: at(1) },
    });
  });

  it('an invalid PRESIGNED_CHECKED without a code is recorded as invalid_signature', () => {
    const snapshot = send(start(), {
      type: 'PRESIGNED_CHECKED',
      at: at(1),
      domain,
      authorization,
      signature: SIGNATURE,
      check: { valid: false },
    });
    expect(snapshot.value).toBe('rejected');
    expect(snapshot.context.lastError).toEqual({ code: 'invalid_signature', message: expect.any(String), at: at(1) });
    expect(snapshot.context.lastError?.message.length).toBeGreaterThan(0);
  });
});

describe('drafted', () => {
  it('SIGNATURE_SUBMITTED moves awaitingSignature → verifyingSignature without touching the context', () => {
    const before = toDrafted();
    const after = send(before, { type: 'SIGNATURE_SUBMITTED', at: at(2) });
    expect(after.value).toEqual({ drafted: 'verifyingSignature' });
    expect(after.context).toEqual(before.context);
  });

  it('a valid SIGNATURE_CHECKED stores the authorization and records the signature', () => {
    const snapshot = send(toVerifyingSignature(), {
      type: 'SIGNATURE_CHECKED',
      at: at(3),
      signature: SIGNATURE,
      check: { valid: true },
    });
    expect(snapshot.value).toEqual({ stored: 'idle' });
    expect(snapshot.context.signature).toBe(SIGNATURE);
    expect(snapshot.context.authorization).toEqual(authorization);
    expect(snapshot.context.lastError).toBeNull();
  });

  it('an invalid SIGNATURE_CHECKED goes back to awaitingSignature with the context unchanged', () => {
    const before = toVerifyingSignature();
    const after = send(before, {
      type: 'SIGNATURE_CHECKED',
      at: at(3),
      signature: SIGNATURE,
      check: { valid: false, code: 'invalid_signature', reason: 'signed by someone else' },
    });
    expect(after.value).toEqual({ drafted: 'awaitingSignature' });
    expect(after.context).toEqual(before.context);
    expect(after.context.signature).toBeNull();
    expect(after.context.lastError).toBeNull();
  });

  it('accepts another signature after an invalid one', () => {
    const snapshot = run(
      toVerifyingSignature(),
      { type: 'SIGNATURE_CHECKED', at: at(3), signature: `0x${'22'.repeat(65)}`, check: { valid: false } },
      { type: 'SIGNATURE_SUBMITTED', at: at(4) },
      { type: 'SIGNATURE_CHECKED', at: at(5), signature: SIGNATURE, check: { valid: true } },
    );
    expect(snapshot.value).toEqual({ stored: 'idle' });
    expect(snapshot.context.signature).toBe(SIGNATURE);
  });

  it('VOID from drafted.awaitingSignature → voided with a void record', () => {
    const snapshot = send(toDrafted(), { type: 'VOID', at: at(9), reason: 'payer left', by: 'operator' });
    expect(snapshot.value).toBe('voided');
    expect(snapshot.status).toBe('done');
    expect(snapshot.context.void).toEqual({ reason: 'payer left', by: 'operator', at: at(9) });
    expect(snapshot.context.signature).toBeNull();
  });

  it('VOID is refused while a signature is being verified (the check finishes first)', () => {
    const snapshot = toVerifyingSignature();
    expect(snapshot.can({ type: 'VOID', at: at(9), reason: 'payer left', by: 'operator' })).toBe(false);
    expect(send(snapshot, { type: 'VOID', at: at(9), reason: 'payer left', by: 'operator' }).value).toEqual({ drafted: 'verifyingSignature' });
  });

  for (const [name, make] of [
    ['awaitingSignature', toDrafted],
    ['verifyingSignature', toVerifyingSignature],
  ] as const) {
    it(`DEADLINE_REACHED from drafted.${name} with the nonce unused → expired with lastError authorization_expired`, () => {
      const snapshot = send(make(), { type: 'DEADLINE_REACHED', at: at(9), onchain: { status: 'unused' } });
      expect(snapshot.value).toBe('expired');
      expect(snapshot.status).toBe('done');
      expect(snapshot.context.lastError).toMatchObject({ code: 'authorization_expired', at: at(9) });
      expect(snapshot.context.lastError?.message).toEqual(expect.any(String));
    });

    // The payer may have handed a signature to someone else: the chain has the last word.
    for (const type of ['DEADLINE_REACHED', 'NONCE_CONSUMED_ONCHAIN'] as const) {
      it(`${type} from drafted.${name} with the nonce used onchain → captured by 'onchain'`, () => {
        const snapshot = send(make(), { type, at: at(9), onchain: consumption('used', OTHER_TX) });
        expect(snapshot.value).toBe('captured');
        expect(snapshot.status).toBe('done');
        expect(snapshot.context.capture).toEqual({
          transactionHash: OTHER_TX,
          blockNumber: '4242',
          blockHash: BLOCK_HASH,
          submittedAt: null,
          preconfirmedAt: at(9),
          confirmedAt: at(9),
          by: 'onchain',
          amount: '12.5',
        });
        expect(snapshot.context.lastError).toBeNull();
      });

      it(`${type} from drafted.${name} with the nonce canceled onchain → canceled by 'onchain'`, () => {
        const snapshot = send(make(), { type, at: at(9), onchain: consumption('canceled', OTHER_TX) });
        expect(snapshot.value).toBe('canceled');
        expect(snapshot.status).toBe('done');
        expect(snapshot.context.cancellation).toEqual({ transactionHash: OTHER_TX, blockNumber: '4242', at: at(9), by: 'onchain' });
        expect(snapshot.context.capture).toBeNull();
      });
    }
  }
});

describe('which events each state accepts (snapshot.can)', () => {
  const table: [string, () => Snapshot, unknown, EventType[]][] = [
    ['drafting', start, 'drafting', ['COMMAND_FAILED', 'DRAFTED', 'PRESIGNED_CHECKED', 'VOID']],
    ['drafted.awaitingSignature', toDrafted, { drafted: 'awaitingSignature' }, ['DEADLINE_REACHED', 'NONCE_CONSUMED_ONCHAIN', 'SIGNATURE_SUBMITTED', 'VOID']],
    // VOID waits for a command in flight to finish: it is accepted only in resting substates.
    [
      'drafted.verifyingSignature',
      toVerifyingSignature,
      { drafted: 'verifyingSignature' },
      ['COMMAND_FAILED', 'DEADLINE_REACHED', 'NONCE_CONSUMED_ONCHAIN', 'SIGNATURE_CHECKED'],
    ],
    ['stored.idle', toStored, { stored: 'idle' }, ['CANCEL_REQUESTED', 'CAPTURE_REQUESTED', 'DEADLINE_REACHED', 'NONCE_CONSUMED_ONCHAIN', 'VOID']],
    ['stored.prechecking', () => toPrechecking(), { stored: 'prechecking' }, ['COMMAND_FAILED', 'DEADLINE_REACHED', 'NONCE_CONSUMED_ONCHAIN', 'PRECHECKED']],
    [
      'stored.verifyingCancellation',
      toVerifyingCancellation,
      { stored: 'verifyingCancellation' },
      ['CANCEL_SIGNATURE_CHECKED', 'COMMAND_FAILED', 'DEADLINE_REACHED', 'NONCE_CONSUMED_ONCHAIN'],
    ],
    [
      'capturing.submitting',
      () => toSubmitting(),
      { capturing: 'submitting' },
      ['CAPTURE_CONFIRMED', 'CAPTURE_FAILED', 'CAPTURE_SUBMITTED', 'COMMAND_FAILED', 'NONCE_CONSUMED_ONCHAIN'],
    ],
    ['capturing.submitted', toSubmitted, { capturing: 'submitted' }, ['CAPTURE_CONFIRMED', 'CAPTURE_FAILED', 'CAPTURE_PRECONFIRMED', 'NONCE_CONSUMED_ONCHAIN']],
    [
      'capturing.preconfirmed',
      toPreconfirmed,
      { capturing: 'preconfirmed' },
      ['CAPTURE_CONFIRMED', 'CAPTURE_FAILED', 'CAPTURE_REORGED', 'NONCE_CONSUMED_ONCHAIN'],
    ],
    ['canceling', toCanceling, 'canceling', ['CANCEL_CONFIRMED', 'CANCEL_FAILED', 'CANCEL_SUBMITTED', 'COMMAND_FAILED', 'NONCE_CONSUMED_ONCHAIN']],
  ];

  for (const [name, make, value, accepted] of table) {
    it(`${name} accepts exactly ${accepted.join(', ')}`, () => {
      const snapshot = make();
      expect(snapshot.value).toEqual(value);
      expect(acceptedEventTypes(snapshot)).toEqual([...accepted].sort());
    });

    it(`${name}: every refused event leaves the snapshot unchanged`, () => {
      const snapshot = make();
      const refused = allEventTypes.filter((type) => !accepted.includes(type));
      expect(refused.length).toBeGreaterThan(0);
      for (const type of refused) expectUnchanged(snapshot, send(snapshot, sampleEvents[type]));
    });
  }

  it('every busy state (tag busy) ends in a resting or final state on COMMAND_FAILED, except a capture on the wire', () => {
    const busy: [string, () => Snapshot, unknown][] = [
      ['drafted.verifyingSignature', toVerifyingSignature, { drafted: 'awaitingSignature' }],
      ['stored.prechecking', () => toPrechecking(), { stored: 'idle' }],
      ['stored.verifyingCancellation', toVerifyingCancellation, { stored: 'idle' }],
      ['capturing.submitting', () => toSubmitting(), { stored: 'idle' }],
      ['canceling', toCanceling, { stored: 'idle' }],
    ];
    for (const [, make, resting] of busy) {
      const before = make();
      expect(before.hasTag('busy')).toBe(true);
      const after = send(before, sampleEvents.COMMAND_FAILED);
      expect(after.value).toEqual(resting);
      expect(after.hasTag('busy')).toBe(false);
      expect(after.context.lastError).toEqual({ code: 'chain_unavailable', message: 'the node stopped answering', at: at(50) });
    }
    // Once the capture transaction is on the wire only the chain may end it (confirmed, failed, consumed).
    for (const make of [toSubmitted, toPreconfirmed]) expect(make().can(sampleEvents.COMMAND_FAILED)).toBe(false);
  });

  it('NONCE_CONSUMED_ONCHAIN reporting an unused nonce is refused (no guard matches)', () => {
    for (const snapshot of [toDrafted(), toVerifyingSignature(), toStored(), toSubmitted(), toCanceling()]) {
      const event = { type: 'NONCE_CONSUMED_ONCHAIN', at: at(60), onchain: { status: 'unused' } } as const;
      expect(snapshot.can(event)).toBe(false);
      expectUnchanged(snapshot, send(snapshot, event));
    }
  });
});

describe('final states accept nothing', () => {
  const finals: [string, () => Snapshot][] = [
    ['voided', () => send(toStored(), sampleEvents.VOID)],
    ['expired', () => send(toStored(), { type: 'DEADLINE_REACHED', at: at(30), onchain: { status: 'unused' } })],
    ['captured', () => send(toPreconfirmed(), sampleEvents.CAPTURE_CONFIRMED)],
    ['canceled', () => send(toCanceling(), sampleEvents.CANCEL_CONFIRMED)],
    ['rejected', () => send(start(), { ...sampleEvents.PRESIGNED_CHECKED, check: { valid: false } })],
  ];

  for (const [name, make] of finals) {
    it(`${name} is final and refuses every event type`, () => {
      const snapshot = make();
      expect(snapshot.value).toBe(name);
      expect(snapshot.status).toBe('done');
      expect(acceptedEventTypes(snapshot)).toEqual([]);
      for (const type of allEventTypes) expectUnchanged(snapshot, send(snapshot, sampleEvents[type]));
      // Also the other guard branches: an unused nonce, a canceled nonce, an invalid check.
      for (const event of [
        { type: 'DEADLINE_REACHED', at: at(70), onchain: { status: 'unused' } },
        { type: 'NONCE_CONSUMED_ONCHAIN', at: at(70), onchain: consumption('canceled') },
        { type: 'SIGNATURE_CHECKED', at: at(70), signature: SIGNATURE, check: { valid: false } },
        { type: 'CANCEL_SIGNATURE_CHECKED', at: at(70), check: { valid: false } },
        { type: 'PRESIGNED_CHECKED', at: at(70), domain, authorization, signature: SIGNATURE, check: { valid: false } },
      ] as const) {
        expect(snapshot.can(event)).toBe(false);
        expectUnchanged(snapshot, send(snapshot, event));
      }
    });
  }
});
