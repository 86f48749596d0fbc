// Which transitions count as a failed capture attempt (authcap_capture_failures_total): walked on the
// real machine, each attempt once, and nothing that is not a failure of ours.
import { describe, expect, it } from 'vitest';
import { isFailedCaptureAttempt } from '../../../workflows/captureFailureReport.js';
import {
  VALID_BEFORE,
  at,
  consumption,
  goodFacts,
  send,
  toPrechecking,
  toPreconfirmed,
  toReleasing,
  toStored,
  toSubmitted,
  toSubmitting,
  toVerifyingCancellation,
  type Snapshot,
} from './machineFixtures.js';
import type { AuthorizationEvent } from '../../../workflows/machine.js';

const failure = { code: 'capture_reverted' as const, message: 'reverted' };

/** Sends the event; says whether it counted, and with which lastError code. */
function counted(before: Snapshot, event: AuthorizationEvent): { counts: boolean; code: string | undefined; after: Snapshot } {
  const after = send(before, event);
  return { counts: isFailedCaptureAttempt(before, after, event.type), code: after.context.lastError?.code, after };
}

describe('a failed capture attempt', () => {
  it('is a precheck that refuses, under the precheck code', () => {
    expect(counted(toPrechecking(), { type: 'PRECHECKED', at: at(5), facts: goodFacts({ payerBalance: '1' }) })).toMatchObject({
      counts: true,
      code: 'insufficient_balance',
    });
    expect(counted(toPrechecking(), { type: 'PRECHECKED', at: at(5), facts: goodFacts({ paused: true }) })).toMatchObject({
      counts: true,
      code: 'token_policy_blocked',
    });
    // Past the deadline, nonce unused: expired, not captured.
    const late = counted(toPrechecking(), { type: 'PRECHECKED', at: at(5), facts: goodFacts({ chainTime: (VALID_BEFORE + 1n).toString() }) });
    expect(late).toMatchObject({ counts: true, code: 'authorization_expired' });
    expect(late.after.value).toBe('expired');
  });

  it('is a command that failed for good, or a transaction that failed, under its code', () => {
    expect(counted(toPrechecking(), { type: 'COMMAND_FAILED', at: at(5), failure: { code: 'chain_unavailable', message: 'down' } })).toMatchObject({
      counts: true,
      code: 'chain_unavailable',
    });
    expect(counted(toSubmitting(), { type: 'COMMAND_FAILED', at: at(6), failure })).toMatchObject({ counts: true, code: 'capture_reverted' });
    expect(counted(toSubmitted(), { type: 'CAPTURE_FAILED', at: at(7), failure })).toMatchObject({ counts: true, code: 'capture_reverted' });
    expect(
      counted(toPreconfirmed(), { type: 'CAPTURE_FAILED', at: at(8), failure: { code: 'authorization_expired', message: 'window closed' } }),
    ).toMatchObject({ counts: true, code: 'authorization_expired' });
  });

  it('counts once: the machine has left the attempt, and a second failure report changes nothing', () => {
    const { after } = counted(toSubmitted(), { type: 'CAPTURE_FAILED', at: at(7), failure });
    expect(counted(after, { type: 'CAPTURE_FAILED', at: at(8), failure }).counts).toBe(false);
    expect(counted(after, { type: 'COMMAND_FAILED', at: at(8), failure }).counts).toBe(false);
    // An event the state ignores (a command failure once the transaction is out) is not one either.
    expect(counted(toSubmitted(), { type: 'COMMAND_FAILED', at: at(7), failure }).counts).toBe(false);
  });

  it('is not a precheck that lets it through, a release, a cancellation, a nonce consumed onchain or a confirmation', () => {
    expect(counted(toPrechecking(), { type: 'PRECHECKED', at: at(5), facts: goodFacts() }).counts).toBe(false);
    expect(counted(toReleasing(), { type: 'CAPTURE_FAILED', at: at(9), failure }).counts).toBe(false);
    expect(counted(toVerifyingCancellation(), { type: 'COMMAND_FAILED', at: at(5), failure }).counts).toBe(false);
    expect(counted(toStored(), { type: 'COMMAND_FAILED', at: at(5), failure }).counts).toBe(false);
    expect(counted(toSubmitted(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(7), onchain: consumption('canceled') }).counts).toBe(false);
    expect(
      counted(toPreconfirmed(), {
        type: 'CAPTURE_CONFIRMED',
        at: at(8),
        transactionHash: `0x${'aa'.repeat(32)}`,
        blockNumber: '100',
        blockHash: `0x${'cc'.repeat(32)}`,
      }).counts,
    ).toBe(false);
  });
});
