// The capturing and canceling states: submission, preconfirmation, reorg, confirmation, failure,
// nonces consumed onchain while in flight, and refusing VOID while a transaction is in flight.
import { describe, it, expect } from 'vitest';
import {
  BLOCK_HASH,
  OTHER_BLOCK_HASH,
  OTHER_TX,
  OUR_TX,
  SIGNATURE,
  at,
  consumption,
  goodFacts,
  run,
  send,
  toCanceling,
  toPrechecking,
  toPreconfirmed,
  toSubmitted,
  toSubmitting,
  expectUnchanged,
  type Snapshot,
} from './machineFixtures.js';

const capturingSubstates: [string, () => Snapshot][] = [
  ['submitting', () => toSubmitting()],
  ['submitted', toSubmitted],
  ['preconfirmed', toPreconfirmed],
];

describe('capturing.submitting', () => {
  it('CAPTURE_SUBMITTED → submitted, recording the tx hash and submittedAt', () => {
    const snapshot = send(toSubmitting(), { type: 'CAPTURE_SUBMITTED', at: at(6), transactionHash: OUR_TX });
    expect(snapshot.value).toEqual({ capturing: 'submitted' });
    expect(snapshot.context.capture).toEqual({
      transactionHash: OUR_TX,
      blockNumber: null,
      blockHash: null,
      submittedAt: at(6),
      preconfirmedAt: null,
      confirmedAt: null,
      by: 'authcap',
      amount: '12.5',
    });
  });

  it('CAPTURE_SUBMITTED clears the lastError left by an earlier failed attempt', () => {
    const failedOnce = run(toPrechecking(), { type: 'PRECHECKED', at: at(5), facts: goodFacts({ paused: true }) });
    expect(failedOnce.context.lastError?.code).toBe('token_policy_blocked');
    const submitting = toSubmitting(failedOnce);
    expect(submitting.value).toEqual({ capturing: 'submitting' });
    const submitted = send(submitting, { type: 'CAPTURE_SUBMITTED', at: at(6), transactionHash: OUR_TX });
    expect(submitted.context.lastError).toBeNull();
    expect(submitted.context.capture?.transactionHash).toBe(OUR_TX);
  });
});

describe('capturing.submitted / preconfirmed', () => {
  it('CAPTURE_PRECONFIRMED → preconfirmed, recording the block and preconfirmedAt', () => {
    const snapshot = send(toSubmitted(), { type: 'CAPTURE_PRECONFIRMED', at: at(7), blockNumber: '100', blockHash: BLOCK_HASH });
    expect(snapshot.value).toEqual({ capturing: 'preconfirmed' });
    expect(snapshot.context.capture).toEqual({
      transactionHash: OUR_TX,
      blockNumber: '100',
      blockHash: BLOCK_HASH,
      submittedAt: at(6),
      preconfirmedAt: at(7),
      confirmedAt: null,
      by: 'authcap',
      amount: '12.5',
    });
  });

  it('CAPTURE_REORGED → back to submitted, forgetting the block and preconfirmedAt but not the tx', () => {
    const snapshot = send(toPreconfirmed(), { type: 'CAPTURE_REORGED', at: at(8) });
    expect(snapshot.value).toEqual({ capturing: 'submitted' });
    expect(snapshot.context.capture).toEqual({
      transactionHash: OUR_TX,
      blockNumber: null,
      blockHash: null,
      submittedAt: at(6),
      preconfirmedAt: null,
      confirmedAt: null,
      by: 'authcap',
      amount: '12.5',
    });
  });

  it('after a reorg the capture can be preconfirmed in a new block and confirmed', () => {
    const snapshot = run(
      toPreconfirmed(),
      { type: 'CAPTURE_REORGED', at: at(8) },
      { type: 'CAPTURE_PRECONFIRMED', at: at(9), blockNumber: '101', blockHash: OTHER_BLOCK_HASH },
      { type: 'CAPTURE_CONFIRMED', at: at(10), transactionHash: OUR_TX, blockNumber: '101', blockHash: OTHER_BLOCK_HASH },
    );
    expect(snapshot.value).toBe('captured');
    expect(snapshot.context.capture).toMatchObject({ blockNumber: '101', blockHash: OTHER_BLOCK_HASH, preconfirmedAt: at(9) });
  });

  it('CAPTURE_CONFIRMED → captured (final): confirmedAt set, preconfirmedAt and submittedAt kept', () => {
    const snapshot = send(toPreconfirmed(), {
      type: 'CAPTURE_CONFIRMED',
      at: at(12),
      transactionHash: OUR_TX,
      blockNumber: '100',
      blockHash: BLOCK_HASH,
    });
    expect(snapshot.value).toBe('captured');
    expect(snapshot.status).toBe('done');
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
    expect(snapshot.context.signature).toBe(SIGNATURE);
  });

  it('CAPTURE_CONFIRMED straight from submitted still records a preconfirmation time', () => {
    const snapshot = send(toSubmitted(), {
      type: 'CAPTURE_CONFIRMED',
      at: at(12),
      transactionHash: OUR_TX,
      blockNumber: '100',
      blockHash: BLOCK_HASH,
    });
    expect(snapshot.value).toBe('captured');
    expect(snapshot.context.capture).toMatchObject({ submittedAt: at(6), confirmedAt: at(12), blockNumber: '100', by: 'authcap' });
    expect(snapshot.context.capture?.preconfirmedAt).not.toBeNull();
  });
});

/** Once a transaction was submitted, the failure names it. */
const txSuffix = (substate: string) => (substate === 'submitting' ? '' : ` (transaction ${OUR_TX})`);

describe('CAPTURE_FAILED (from every capturing substate)', () => {
  for (const [name, make] of capturingSubstates) {
    it(`from ${name} with authorization_expired → expired (final) with that error`, () => {
      const snapshot = send(make(), {
        type: 'CAPTURE_FAILED',
        at: at(15),
        failure: { code: 'authorization_expired', message: 'FiatTokenV2: authorization is expired' },
      });
      expect(snapshot.value).toBe('expired');
      expect(snapshot.status).toBe('done');
      expect(snapshot.context.lastError).toEqual({
        code: 'authorization_expired',
        message: `FiatTokenV2: authorization is expired${txSuffix(name)}`,
        at: at(15),
      });
      expect(snapshot.context.capture).toBeNull();
    });

    it(`from ${name} with any other code → stored.idle with lastError, capture may be retried`, () => {
      const snapshot = send(make(), {
        type: 'CAPTURE_FAILED',
        at: at(15),
        failure: { code: 'insufficient_balance', message: 'ERC20: transfer amount exceeds balance' },
      });
      expect(snapshot.value).toEqual({ stored: 'idle' });
      expect(snapshot.status).toBe('active');
      // The failed transaction is named in the reason; no capture stays on the record.
      expect(snapshot.context.lastError).toEqual({
        code: 'insufficient_balance',
        message: `ERC20: transfer amount exceeds balance${txSuffix(name)}`,
        at: at(15),
      });
      expect(snapshot.context.capture).toBeNull();
      expect(snapshot.context.signature).toBe(SIGNATURE);
      expect(snapshot.can({ type: 'CAPTURE_REQUESTED', at: at(16) })).toBe(true);
    });
  }
});

describe('NONCE_CONSUMED_ONCHAIN while capturing', () => {
  it('used by our own transaction → captured by authcap, keeping submittedAt and preconfirmedAt', () => {
    const snapshot = send(toPreconfirmed(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(14), onchain: consumption('used', OUR_TX) });
    expect(snapshot.value).toBe('captured');
    expect(snapshot.context.capture).toEqual({
      transactionHash: OUR_TX,
      blockNumber: '4242',
      blockHash: BLOCK_HASH,
      submittedAt: at(6),
      preconfirmedAt: at(7),
      confirmedAt: at(14),
      by: 'authcap',
      amount: '12.5',
    });
  });

  it('used by our own transaction before preconfirmation → by authcap, preconfirmedAt filled in', () => {
    const snapshot = send(toSubmitted(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(14), onchain: consumption('used', OUR_TX) });
    expect(snapshot.context.capture).toMatchObject({ by: 'authcap', submittedAt: at(6), preconfirmedAt: at(14), confirmedAt: at(14) });
  });

  for (const [name, make] of capturingSubstates) {
    it(`from ${name}, used by a different transaction → captured by 'onchain' with that tx`, () => {
      const snapshot = send(make(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(14), onchain: consumption('used', OTHER_TX) });
      expect(snapshot.value).toBe('captured');
      expect(snapshot.status).toBe('done');
      expect(snapshot.context.capture).toEqual({
        transactionHash: OTHER_TX,
        blockNumber: '4242',
        blockHash: BLOCK_HASH,
        submittedAt: null,
        preconfirmedAt: at(14),
        confirmedAt: at(14),
        by: 'onchain',
        amount: '12.5',
      });
    });

    it(`from ${name}, canceled onchain → canceled by 'onchain'`, () => {
      const snapshot = send(make(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(14), onchain: consumption('canceled', OTHER_TX) });
      expect(snapshot.value).toBe('canceled');
      expect(snapshot.status).toBe('done');
      expect(snapshot.context.cancellation).toEqual({ transactionHash: OTHER_TX, blockNumber: '4242', at: at(14), by: 'onchain' });
    });
  }
});

describe('VOID is refused while a transaction is in flight', () => {
  const inFlight: [string, () => Snapshot][] = [...capturingSubstates, ['canceling', toCanceling]];
  for (const [name, make] of inFlight) {
    it(`${name}: can(VOID) is false and VOID leaves the snapshot unchanged`, () => {
      const before = make();
      const event = { type: 'VOID', at: at(40), reason: 'too late', by: 'operator' } as const;
      expect(before.can(event)).toBe(false);
      const after = send(before, event);
      expectUnchanged(before, after);
      expect(after.context.void).toBeNull();
    });
  }
});

describe('canceling', () => {
  it('CANCEL_SUBMITTED stays in canceling, records our cancellation tx and clears lastError', () => {
    const failedPrecheck = run(toPrechecking(), { type: 'PRECHECKED', at: at(5), facts: goodFacts({ paused: true }) });
    const canceling = run(failedPrecheck, { type: 'CANCEL_REQUESTED', at: at(6) }, { type: 'CANCEL_SIGNATURE_CHECKED', at: at(7), check: { valid: true } });
    expect(canceling.value).toBe('canceling');
    expect(canceling.context.lastError).not.toBeNull();
    const snapshot = send(canceling, { type: 'CANCEL_SUBMITTED', at: at(8), transactionHash: OUR_TX });
    expect(snapshot.value).toBe('canceling');
    expect(snapshot.status).toBe('active');
    expect(snapshot.context.cancellation).toEqual({ transactionHash: OUR_TX, blockNumber: null, at: at(8), by: 'authcap' });
    expect(snapshot.context.lastError).toBeNull();
  });

  it('NONCE_CONSUMED_ONCHAIN (canceled) by our own relayed tx → canceled by authcap', () => {
    const snapshot = run(
      toCanceling(),
      { type: 'CANCEL_SUBMITTED', at: at(8), transactionHash: OUR_TX },
      { type: 'NONCE_CONSUMED_ONCHAIN', at: at(9), onchain: consumption('canceled', OUR_TX) },
    );
    expect(snapshot.value).toBe('canceled');
    expect(snapshot.context.cancellation).toEqual({ transactionHash: OUR_TX, blockNumber: '4242', at: at(9), by: 'authcap' });
  });

  it('NONCE_CONSUMED_ONCHAIN (canceled) by another tx after ours was sent → canceled by onchain', () => {
    const snapshot = run(
      toCanceling(),
      { type: 'CANCEL_SUBMITTED', at: at(8), transactionHash: OUR_TX },
      { type: 'NONCE_CONSUMED_ONCHAIN', at: at(9), onchain: consumption('canceled', OTHER_TX) },
    );
    expect(snapshot.context.cancellation).toEqual({ transactionHash: OTHER_TX, blockNumber: '4242', at: at(9), by: 'onchain' });
  });

  it('CANCEL_CONFIRMED → canceled (final) with a cancellation by authcap', () => {
    const snapshot = send(toCanceling(), { type: 'CANCEL_CONFIRMED', at: at(20), transactionHash: OTHER_TX, blockNumber: '555' });
    expect(snapshot.value).toBe('canceled');
    expect(snapshot.status).toBe('done');
    expect(snapshot.context.cancellation).toEqual({ transactionHash: OTHER_TX, blockNumber: '555', at: at(20), by: 'authcap' });
    expect(snapshot.context.capture).toBeNull();
  });

  it('CANCEL_FAILED → stored.idle with lastError; capture and cancel may be requested again', () => {
    const snapshot = send(toCanceling(), { type: 'CANCEL_FAILED', at: at(20), failure: { code: 'chain_unavailable', message: 'rpc timeout' } });
    expect(snapshot.value).toEqual({ stored: 'idle' });
    expect(snapshot.context.lastError).toEqual({ code: 'chain_unavailable', message: 'rpc timeout', at: at(20) });
    expect(snapshot.context.cancellation).toBeNull();
    expect(snapshot.can({ type: 'CANCEL_REQUESTED', at: at(21) })).toBe(true);
    expect(snapshot.can({ type: 'CAPTURE_REQUESTED', at: at(21) })).toBe(true);
  });

  it('NONCE_CONSUMED_ONCHAIN (canceled) → canceled by onchain', () => {
    const snapshot = send(toCanceling(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(20), onchain: consumption('canceled', OTHER_TX) });
    expect(snapshot.value).toBe('canceled');
    expect(snapshot.context.cancellation).toMatchObject({ transactionHash: OTHER_TX, by: 'onchain' });
  });

  it('NONCE_CONSUMED_ONCHAIN (used) → captured by onchain (someone captured before the cancel landed)', () => {
    const snapshot = send(toCanceling(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(20), onchain: consumption('used', OTHER_TX) });
    expect(snapshot.value).toBe('captured');
    expect(snapshot.context.capture).toMatchObject({ transactionHash: OTHER_TX, by: 'onchain', submittedAt: null });
    expect(snapshot.context.cancellation).toBeNull();
  });
});
