// Partial captures in the authorization machine: the amount a CAPTURE_REQUESTED keeps, the
// capturing.releasing substate a partial capture at depth waits in while the difference goes back to
// the payer (RELEASE_UPDATED), and what it refuses or swallows meanwhile.
import { describe, it, expect } from 'vitest';
import type { RefundRecord } from '../../../domain/refunds.js';
import type { AuthorizationEvent } from '../../../workflows/machine.js';
import {
  BLOCK_HASH,
  KEPT,
  OTHER_TX,
  OUR_TX,
  SIGNATURE,
  VALUE,
  acceptedEventTypes,
  allEventTypes,
  at,
  consumption,
  expectUnchanged,
  goodFacts,
  releaseRecord,
  run,
  sampleEvents,
  send,
  toPartialPrechecking,
  toPartialPreconfirmed,
  toPartialSubmitted,
  toPartialSubmitting,
  toPreconfirmed,
  toPrechecking,
  toReleasing,
  toStored,
  type Snapshot,
} from './machineFixtures.js';

const confirmed = { type: 'CAPTURE_CONFIRMED', at: at(12), transactionHash: OUR_TX, blockNumber: '100', blockHash: BLOCK_HASH } as const;

const partialSubstates: [string, () => Snapshot][] = [
  ['submitting', () => toPartialSubmitting()],
  ['submitted', () => toPartialSubmitted()],
  ['preconfirmed', () => toPartialPreconfirmed()],
];

const releaseUpdated = (release: RefundRecord, n = 20) => ({ type: 'RELEASE_UPDATED', at: at(n), release }) as const;

describe('CAPTURE_REQUESTED records what the capture keeps', () => {
  it('with an amount: stored.prechecking with captureAmount set, nothing else changed', () => {
    const before = toStored();
    const after = send(before, { type: 'CAPTURE_REQUESTED', at: at(4), amount: KEPT });
    expect(after.value).toEqual({ stored: 'prechecking' });
    expect(after.context.captureAmount).toBe(KEPT);
    expect({ ...after.context, captureAmount: null }).toEqual(before.context);
  });

  it('without an amount after a partial one: captureAmount goes back to null (all of it)', () => {
    // A partial capture whose precheck failed leaves its amount; the next request asks for all of it.
    const failed = send(toPartialPrechecking(), { type: 'PRECHECKED', at: at(5), facts: goodFacts({ paused: true }) });
    expect(failed.value).toEqual({ stored: 'idle' });
    expect(failed.context.captureAmount).toBe(KEPT);
    const full = send(failed, { type: 'CAPTURE_REQUESTED', at: at(6) });
    expect(full.value).toEqual({ stored: 'prechecking' });
    expect(full.context.captureAmount).toBeNull();
  });

  it('a second request with another amount replaces the first', () => {
    const failed = send(toPartialPrechecking(), { type: 'PRECHECKED', at: at(5), facts: goodFacts({ paused: true }) });
    expect(toPartialPrechecking('3000000', failed).context.captureAmount).toBe('3000000');
  });

  it('the precheck judges the payer balance against the full signed value, not the kept amount', () => {
    // receiveWithAuthorization moves the whole signed value: a payer holding only the kept amount fails.
    const after = send(toPartialPrechecking(), { type: 'PRECHECKED', at: at(5), facts: goodFacts({ payerBalance: KEPT }) });
    expect(after.value).toEqual({ stored: 'idle' });
    expect(after.context.lastError?.code).toBe('insufficient_balance');
  });
});

describe('a full capture still goes straight to captured', () => {
  it('without an amount: CAPTURE_CONFIRMED → captured with capture.amount the whole value', () => {
    const snapshot = send(toPreconfirmed(), confirmed);
    expect(snapshot.value).toBe('captured');
    expect(snapshot.status).toBe('done');
    expect(snapshot.context.captureAmount).toBeNull();
    expect(snapshot.context.capture?.amount).toBe('12.5');
    expect(snapshot.context.release).toBeNull();
  });

  it('with an amount equal to the authorized value: a full capture, no release', () => {
    const snapshot = send(toPartialPreconfirmed(VALUE), confirmed);
    expect(snapshot.value).toBe('captured');
    expect(snapshot.status).toBe('done');
    expect(snapshot.context.captureAmount).toBe(VALUE);
    expect(snapshot.context.capture).toEqual({
      transactionHash: OUR_TX,
      blockNumber: '100',
      blockHash: BLOCK_HASH,
      submittedAt: at(6),
      preconfirmedAt: at(7),
      confirmedAt: at(12),
      by: 'authcap',
      amount: '12.5',
    });
    expect(snapshot.context.release).toBeNull();
  });

  it('with an amount equal to the value, a nonce used by our transaction → captured, not releasing', () => {
    const snapshot = send(toPartialSubmitted(VALUE), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(14), onchain: consumption('used', OUR_TX) });
    expect(snapshot.value).toBe('captured');
    expect(snapshot.context.capture).toMatchObject({ by: 'authcap', amount: '12.5' });
  });
});

describe('a partial capture at depth → capturing.releasing', () => {
  it('CAPTURE_CONFIRMED from preconfirmed → releasing, capture.amount the kept amount', () => {
    const snapshot = send(toPartialPreconfirmed(), confirmed);
    expect(snapshot.value).toEqual({ capturing: 'releasing' });
    expect(snapshot.status).toBe('active');
    expect(snapshot.context.capture).toEqual({
      transactionHash: OUR_TX,
      blockNumber: '100',
      blockHash: BLOCK_HASH,
      submittedAt: at(6),
      preconfirmedAt: at(7),
      confirmedAt: at(12),
      by: 'authcap',
      amount: '10',
    });
    expect(snapshot.context.captureAmount).toBe(KEPT);
    // The release is opened by the workflow (RELEASE_UPDATED), not by the machine.
    expect(snapshot.context.release).toBeNull();
    expect(snapshot.context.signature).toBe(SIGNATURE);
  });

  it('CAPTURE_CONFIRMED straight from submitted → releasing, a preconfirmation time filled in', () => {
    const snapshot = send(toPartialSubmitted(), confirmed);
    expect(snapshot.value).toEqual({ capturing: 'releasing' });
    expect(snapshot.context.capture).toMatchObject({ submittedAt: at(6), preconfirmedAt: at(12), confirmedAt: at(12), by: 'authcap', amount: '10' });
  });

  it('capture.amount keeps every decimal of the kept amount', () => {
    const snapshot = send(toPartialPreconfirmed('12499999'), confirmed);
    expect(snapshot.value).toEqual({ capturing: 'releasing' });
    expect(snapshot.context.capture?.amount).toBe('12.499999');
  });

  it('keeping a single minor unit is a partial capture too', () => {
    const snapshot = send(toPartialPreconfirmed('1'), confirmed);
    expect(snapshot.value).toEqual({ capturing: 'releasing' });
    expect(snapshot.context.capture?.amount).toBe('0.000001');
  });

  it('NONCE_CONSUMED_ONCHAIN used by our own transaction → releasing by authcap, times kept', () => {
    const snapshot = send(toPartialPreconfirmed(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(14), onchain: consumption('used', OUR_TX) });
    expect(snapshot.value).toEqual({ capturing: 'releasing' });
    expect(snapshot.context.capture).toEqual({
      transactionHash: OUR_TX,
      blockNumber: '4242',
      blockHash: BLOCK_HASH,
      submittedAt: at(6),
      preconfirmedAt: at(7),
      confirmedAt: at(14),
      by: 'authcap',
      amount: '10',
    });
  });

  it('NONCE_CONSUMED_ONCHAIN used by our own transaction before preconfirmation → preconfirmedAt filled in', () => {
    const snapshot = send(toPartialSubmitted(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(14), onchain: consumption('used', OUR_TX) });
    expect(snapshot.value).toEqual({ capturing: 'releasing' });
    expect(snapshot.context.capture).toMatchObject({ by: 'authcap', submittedAt: at(6), preconfirmedAt: at(14), confirmedAt: at(14), amount: '10' });
  });

  it('NONCE_CONSUMED_ONCHAIN used before anything was submitted → releasing by onchain, no submission time', () => {
    const snapshot = send(toPartialSubmitting(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(14), onchain: consumption('used', OTHER_TX) });
    expect(snapshot.value).toEqual({ capturing: 'releasing' });
    expect(snapshot.context.capture).toEqual({
      transactionHash: OTHER_TX,
      blockNumber: '4242',
      blockHash: BLOCK_HASH,
      submittedAt: null,
      preconfirmedAt: at(14),
      confirmedAt: at(14),
      by: 'onchain',
      amount: '10',
    });
  });

  for (const [name, make] of partialSubstates) {
    it(`from ${name}, NONCE_CONSUMED_ONCHAIN used by another transaction → releasing by onchain with that tx`, () => {
      const snapshot = send(make(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(14), onchain: consumption('used', OTHER_TX) });
      expect(snapshot.value).toEqual({ capturing: 'releasing' });
      expect(snapshot.status).toBe('active');
      expect(snapshot.context.capture).toMatchObject({
        transactionHash: OTHER_TX,
        blockNumber: '4242',
        blockHash: BLOCK_HASH,
        confirmedAt: at(14),
        by: 'onchain',
        amount: '10',
      });
    });

    it(`from ${name}, NONCE_CONSUMED_ONCHAIN canceled → canceled by onchain (nothing was captured)`, () => {
      const snapshot = send(make(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(14), onchain: consumption('canceled', OTHER_TX) });
      expect(snapshot.value).toBe('canceled');
      expect(snapshot.status).toBe('done');
      expect(snapshot.context.cancellation).toEqual({ transactionHash: OTHER_TX, blockNumber: '4242', at: at(14), by: 'onchain' });
    });

    it(`from ${name}, CAPTURE_FAILED → stored.idle as for a full capture, no release`, () => {
      const snapshot = send(make(), { type: 'CAPTURE_FAILED', at: at(15), failure: { code: 'capture_reverted', message: 'reverted' } });
      expect(snapshot.value).toEqual({ stored: 'idle' });
      expect(snapshot.context.capture).toBeNull();
      expect(snapshot.context.release).toBeNull();
      expect(snapshot.context.lastError?.code).toBe('capture_reverted');
    });
  }
});

describe('capturing.releasing', () => {
  it('accepts exactly RELEASE_UPDATED', () => {
    const snapshot = toReleasing();
    expect(snapshot.value).toEqual({ capturing: 'releasing' });
    expect(acceptedEventTypes(snapshot)).toEqual(['RELEASE_UPDATED']);
  });

  it('every refused event leaves the snapshot unchanged', () => {
    const snapshot = toReleasing();
    const refused = allEventTypes.filter((type) => type !== 'RELEASE_UPDATED');
    expect(refused.length).toBe(allEventTypes.length - 1);
    for (const type of refused) expectUnchanged(snapshot, send(snapshot, sampleEvents[type]));
  });

  it('carries the busy tag (a command is in flight: the release)', () => {
    expect(toReleasing().hasTag('busy')).toBe(true);
  });

  it('VOID is refused: the money has moved', () => {
    const before = toReleasing();
    const event = { type: 'VOID', at: at(40), reason: 'too late', by: 'operator' } as const;
    expect(before.can(event)).toBe(false);
    const after = send(before, event);
    expectUnchanged(before, after);
    expect(after.context.void).toBeNull();
  });

  // capturing's own CAPTURE_CONFIRMED / CAPTURE_FAILED / NONCE_CONSUMED_ONCHAIN would leave for
  // captured, stored, expired or canceled: releasing shadows them with transitions that do nothing.
  const swallowed: [string, AuthorizationEvent][] = [
    ['CAPTURE_CONFIRMED', { ...confirmed, at: at(30), blockNumber: '101' }],
    ['CAPTURE_FAILED (capture_reverted)', { type: 'CAPTURE_FAILED', at: at(30), failure: { code: 'capture_reverted', message: 'reverted' } }],
    ['CAPTURE_FAILED (authorization_expired)', { type: 'CAPTURE_FAILED', at: at(30), failure: { code: 'authorization_expired', message: 'expired' } }],
    ['NONCE_CONSUMED_ONCHAIN (used, ours)', { type: 'NONCE_CONSUMED_ONCHAIN', at: at(30), onchain: consumption('used', OUR_TX) }],
    ['NONCE_CONSUMED_ONCHAIN (used, another)', { type: 'NONCE_CONSUMED_ONCHAIN', at: at(30), onchain: consumption('used', OTHER_TX) }],
    ['NONCE_CONSUMED_ONCHAIN (canceled)', { type: 'NONCE_CONSUMED_ONCHAIN', at: at(30), onchain: consumption('canceled', OTHER_TX) }],
  ];

  for (const [name, event] of swallowed) {
    it(`${name} changes nothing: value, context and status unchanged`, () => {
      // With a release under way too, so a change to it would show.
      const before = send(toReleasing(), releaseUpdated(releaseRecord('submitted')));
      const after = send(before, event);
      expect(before.can(event)).toBe(false);
      expectUnchanged(before, after);
      expect(after.value).toEqual({ capturing: 'releasing' });
      expect(after.context.capture).toEqual(before.context.capture);
      expect(after.context.release).toEqual(before.context.release);
      expect(after.hasTag('busy')).toBe(true);
    });
  }

  for (const stage of ['prechecking', 'submitting', 'submitted', 'preconfirmed', 'awaitingExpiry'] as const) {
    it(`RELEASE_UPDATED with a ${stage} release stays in releasing and records it`, () => {
      const release = releaseRecord(stage);
      const before = toReleasing();
      const after = send(before, releaseUpdated(release));
      expect(after.value).toEqual({ capturing: 'releasing' });
      expect(after.status).toBe('active');
      expect(after.context.release).toEqual(release);
      // Nothing went wrong on the way: the authorization's lastError is as it was.
      expect(after.context.lastError).toBeNull();
      expect({ ...after.context, release: null }).toEqual(before.context);
    });
  }

  it("RELEASE_UPDATED with a release that has a lastError records it as the authorization's lastError", () => {
    const trouble = { code: 'token_policy_blocked', message: 'the token is paused', at: at(19) } as const;
    const after = send(toReleasing(), releaseUpdated({ ...releaseRecord('awaitingExpiry'), lastError: trouble }));
    expect(after.value).toEqual({ capturing: 'releasing' });
    expect(after.context.lastError).toEqual(trouble);
    expect(after.context.release?.lastError).toEqual(trouble);
  });

  it("RELEASE_UPDATED with a failed release stays in releasing; its failure (over its lastError) is the authorization's lastError", () => {
    const failure = { code: 'insufficient_merchant_balance', message: 'the merchant key holds 1, the refund needs 2.5', at: at(19) } as const;
    const lastError = { code: 'chain_unavailable', message: 'refund attempt 1 was not mined', at: at(18) } as const;
    const release: RefundRecord = { ...releaseRecord('failed'), transactionHash: null, failure, lastError, failedAt: at(19) };
    const after = send(toReleasing(), releaseUpdated(release));
    expect(after.value).toEqual({ capturing: 'releasing' });
    expect(after.status).toBe('active');
    expect(after.context.release).toEqual(release);
    expect(after.context.lastError).toEqual(failure);
  });

  it('RELEASE_UPDATED with no trouble of its own keeps the lastError an earlier update left', () => {
    const trouble = { code: 'token_policy_blocked', message: 'the token is paused', at: at(19) } as const;
    const after = run(
      toReleasing(),
      releaseUpdated({ ...releaseRecord('awaitingExpiry'), lastError: trouble }, 20),
      releaseUpdated(releaseRecord('submitted'), 21),
    );
    expect(after.value).toEqual({ capturing: 'releasing' });
    expect(after.context.release?.stage).toBe('submitted');
    expect(after.context.lastError).toEqual(trouble);
  });

  it('RELEASE_UPDATED with a succeeded release → captured (final), lastError cleared, release and capture kept', () => {
    const trouble = { code: 'token_policy_blocked', message: 'the token is paused', at: at(19) } as const;
    const retrying = send(toReleasing(), releaseUpdated({ ...releaseRecord('awaitingExpiry'), lastError: trouble }, 20));
    expect(retrying.context.lastError).toEqual(trouble);
    const release = releaseRecord('succeeded');
    const after = send(retrying, releaseUpdated(release, 21));
    expect(after.value).toBe('captured');
    expect(after.status).toBe('done');
    expect(after.hasTag('busy')).toBe(false);
    expect(after.context.lastError).toBeNull();
    expect(after.context.release).toEqual(release);
    expect(after.context.capture).toEqual(retrying.context.capture);
    expect(after.context.capture?.amount).toBe('10');
    expect(acceptedEventTypes(after)).toEqual([]);
  });

  it('a whole partial capture: request, precheck, submit, preconfirm, confirm, release → captured keeping 10', () => {
    const snapshot = run(
      toStored(),
      { type: 'CAPTURE_REQUESTED', at: at(4), amount: KEPT },
      { type: 'PRECHECKED', at: at(5), facts: goodFacts() },
      { type: 'CAPTURE_SUBMITTED', at: at(6), transactionHash: OUR_TX },
      { type: 'CAPTURE_PRECONFIRMED', at: at(7), blockNumber: '100', blockHash: BLOCK_HASH },
      confirmed,
      releaseUpdated(releaseRecord('prechecking'), 13),
      releaseUpdated(releaseRecord('submitted'), 14),
      releaseUpdated(releaseRecord('succeeded'), 15),
    );
    expect(snapshot.value).toBe('captured');
    expect(snapshot.context.capture?.amount).toBe('10');
    expect(snapshot.context.release?.stage).toBe('succeeded');
  });
});

describe('RELEASE_UPDATED outside releasing', () => {
  const elsewhere: [string, () => Snapshot][] = [
    ['stored.idle', toStored],
    ['stored.prechecking (partial)', () => toPartialPrechecking()],
    ['capturing.submitting (partial)', () => toPartialSubmitting()],
    ['capturing.preconfirmed (partial)', () => toPartialPreconfirmed()],
    ['captured (full)', () => send(toPreconfirmed(), confirmed)],
    ['captured (partial, released)', () => send(toReleasing(), releaseUpdated(releaseRecord('succeeded')))],
  ];
  for (const [name, make] of elsewhere) {
    it(`${name} refuses it, succeeded or not`, () => {
      const before = make();
      for (const stage of ['succeeded', 'failed', 'submitted'] as const) {
        const event = releaseUpdated(releaseRecord(stage), 40);
        expect(before.can(event)).toBe(false);
        expectUnchanged(before, send(before, event));
      }
    });
  }

  it('the partial capture substates accept the same events as a full capture in the same substate', () => {
    const full: [string, Snapshot][] = [
      ['submitting', send(toPrechecking(), { type: 'PRECHECKED', at: at(5), facts: goodFacts() })],
      ['preconfirmed', toPreconfirmed()],
    ];
    for (const [name, snapshot] of full) {
      const partial = partialSubstates.find(([n]) => n === name)![1]();
      expect(partial.value).toEqual(snapshot.value);
      expect(acceptedEventTypes(partial)).toEqual(acceptedEventTypes(snapshot));
    }
  });
});

describe('a partial capture asked for stands once its command has given up', () => {
  // The capture command gave up while its transaction was on its way (COMMAND_FAILED from
  // submitting: stored again, in doubt), and the chain then shows the nonce used: the merchant still
  // keeps only what it asked for, and the rest must go back.
  const inDoubt = () =>
    send(toPartialSubmitting(), { type: 'COMMAND_FAILED', at: at(13), failure: { code: 'chain_unavailable', message: 'the relayer did not answer' } });

  it('COMMAND_FAILED from submitting rests at stored with the asked amount kept', () => {
    const snapshot = inDoubt();
    expect(snapshot.value).toEqual({ stored: 'idle' });
    expect(snapshot.context.captureAmount).toBe(KEPT);
  });

  for (const type of ['NONCE_CONSUMED_ONCHAIN', 'DEADLINE_REACHED'] as const) {
    it(`${type} used onchain → capturing.releasing keeping the asked amount, not captured in full`, () => {
      const snapshot = send(inDoubt(), { type, at: at(14), onchain: consumption('used', OUR_TX) });
      expect(snapshot.value).toEqual({ capturing: 'releasing' });
      expect(snapshot.hasTag('busy')).toBe(true);
      expect(snapshot.context.capture).toMatchObject({ transactionHash: OUR_TX, amount: '10', confirmedAt: at(14) });
    });
  }

  it('a later capture asked for in full replaces it: the nonce used onchain is then a full capture', () => {
    const full = send(send(inDoubt(), { type: 'CAPTURE_REQUESTED', at: at(15) }), {
      type: 'COMMAND_FAILED',
      at: at(16),
      failure: { code: 'chain_unavailable', message: 'down' },
    });
    const snapshot = send(full, { type: 'NONCE_CONSUMED_ONCHAIN', at: at(17), onchain: consumption('used', OUR_TX) });
    expect(snapshot.value).toBe('captured');
    expect(snapshot.context.capture?.amount).toBe('12.5');
  });

  it('a canceled nonce is still canceled (nothing was captured, nothing goes back)', () => {
    const snapshot = send(inDoubt(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(14), onchain: consumption('canceled', OTHER_TX) });
    expect(snapshot.value).toBe('canceled');
    expect(snapshot.context.release).toBeNull();
  });
});
