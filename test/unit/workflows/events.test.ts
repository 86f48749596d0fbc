// Which transitions become events, and the ids that make them de-duplicable.
import { describe, expect, it } from 'vitest';
import { eventId, parseEventId } from '../../../domain/events.js';
import { eventTypesFor, stageOf } from '../../../workflows/events.js';

describe('eventTypesFor', () => {
  it.each([
    ['drafting', 'drafted.awaitingSignature', 'DRAFTED', ['authorization.drafted']],
    ['drafted.verifyingSignature', 'stored.idle', 'SIGNATURE_CHECKED', ['authorization.stored']],
    ['drafting', 'stored.idle', 'PRESIGNED_CHECKED', ['authorization.stored']],
    ['drafting', 'rejected', 'PRESIGNED_CHECKED', ['authorization.rejected']],
    ['stored.prechecking', 'stored.idle', 'PRECHECKED', ['authorization.capture_failed']],
    ['stored.prechecking', 'stored.idle', 'COMMAND_FAILED', ['authorization.capture_failed']],
    ['capturing.submitting', 'stored.idle', 'COMMAND_FAILED', ['authorization.capture_failed']],
    ['capturing.submitted', 'stored.idle', 'CAPTURE_FAILED', ['authorization.capture_failed']],
    ['capturing.submitted', 'capturing.preconfirmed', 'CAPTURE_PRECONFIRMED', ['authorization.preconfirmed']],
    ['capturing.preconfirmed', 'capturing.submitted', 'CAPTURE_REORGED', ['authorization.reorged']],
    ['capturing.preconfirmed', 'captured', 'CAPTURE_CONFIRMED', ['authorization.captured']],
    ['stored.idle', 'captured', 'NONCE_CONSUMED_ONCHAIN', ['authorization.captured']],
    ['canceling', 'canceled', 'CANCEL_CONFIRMED', ['authorization.canceled']],
    ['stored.idle', 'canceled', 'NONCE_CONSUMED_ONCHAIN', ['authorization.canceled']],
    ['drafted.awaitingSignature', 'voided', 'VOID', ['authorization.voided']],
    ['stored.idle', 'expired', 'DEADLINE_REACHED', ['authorization.expired']],
    ['capturing.submitted', 'expired', 'CAPTURE_FAILED', ['authorization.expired']],
  ])('%s → %s on %s', (from, to, event, expected) => {
    expect(eventTypesFor(from, to, event)).toEqual(expected);
  });

  it.each([
    // Commands in flight and refused commands are not events: the caller got the answer already.
    ['drafted.awaitingSignature', 'drafted.verifyingSignature', 'SIGNATURE_SUBMITTED'],
    ['drafted.verifyingSignature', 'drafted.awaitingSignature', 'SIGNATURE_CHECKED'],
    ['stored.idle', 'stored.prechecking', 'CAPTURE_REQUESTED'],
    ['stored.prechecking', 'capturing.submitting', 'PRECHECKED'],
    ['capturing.submitting', 'capturing.submitted', 'CAPTURE_SUBMITTED'],
    ['stored.idle', 'stored.verifyingCancellation', 'CANCEL_REQUESTED'],
    ['stored.verifyingCancellation', 'canceling', 'CANCEL_SIGNATURE_CHECKED'],
    ['canceling', 'stored.idle', 'CANCEL_FAILED'],
    ['stored.idle', 'stored.idle', 'NONCE_CONSUMED_ONCHAIN'],
  ])('%s → %s on %s is no event', (from, to, event) => {
    expect(eventTypesFor(from, to, event)).toEqual([]);
  });

  it('reads nested machine values as dotted stages', () => {
    expect(stageOf('captured')).toBe('captured');
    expect(stageOf({ capturing: 'preconfirmed' })).toBe('capturing.preconfirmed');
  });
});

describe('event ids', () => {
  it('are deterministic per attempt and sequence, and parse back', () => {
    const run = '01a20857-b94c-73ca-a773-19703a398a5e';
    expect(eventId(run, 3)).toBe(`evt_${run}_0003`);
    expect(parseEventId(eventId(run, 12_345))).toEqual({ firstRunId: run, sequence: 12_345 });
    for (const bad of ['evt_x_0001', `evt_${run}_1`, `auth_${run}_0001`, `evt_${run}_0001 `]) expect(parseEventId(bad)).toBeUndefined();
  });
});
