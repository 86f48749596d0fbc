// The hold's states of the authorization machine (workflows/holdStates.ts), walked with the pure
// transition function: drafted → holding → held → captures in parts → captured / voided / expired.
import { describe, expect, it } from 'vitest';
import { initialTransition } from 'xstate';
import { authorizationMachine } from '../../../workflows/machine.js';
import type { HoldCapture } from '../../../domain/holds.js';
import { toWire } from '../../../domain/escrowCall.js';
import { holdTerms } from '../../../domain/hold.js';
import {
  acceptedEventTypes,
  at,
  authorization,
  consumption,
  domain,
  expectUnchanged,
  goodFacts,
  input,
  MERCHANT,
  OTHER_TX,
  OUR_TX,
  PAYER,
  run,
  sampleEvents,
  send,
  SIGNATURE,
  TOKEN,
  VALUE,
  type Snapshot,
} from './machineFixtures.js';

const terms = toWire(
  holdTerms({
    operator: MERCHANT,
    receiver: MERCHANT,
    payer: PAYER,
    token: TOKEN,
    amount: BigInt(VALUE),
    authorizeBy: 1_700_000_900,
    authorizationId: 'order-1',
  }),
);
const startHold = (): Snapshot => initialTransition(authorizationMachine, input)[0];
const toHolding = () =>
  run(
    startHold(),
    { type: 'DRAFTED', at: at(1), domain, authorization, hold: { terms, paymentInfoHash: `0x${'ab'.repeat(32)}` } },
    { type: 'SIGNATURE_SUBMITTED', at: at(2) },
    { type: 'SIGNATURE_CHECKED', at: at(3), signature: SIGNATURE, check: { valid: true } },
  );
const toHeld = () =>
  run(
    toHolding(),
    { type: 'PRECHECKED', at: at(4), facts: goodFacts() },
    { type: 'HOLD_SUBMITTED', at: at(5), transactionHash: OUR_TX },
    { type: 'HOLD_CONFIRMED', at: at(6), transactionHash: OUR_TX, blockNumber: '100', amountMinor: VALUE },
  );
const part = (sequence: number, amountMinor: string, final = false): HoldCapture => ({
  sequence,
  amountMinor,
  final,
  requestKey: `k${sequence}`,
  requestFingerprint: 'f',
  stage: 'pending',
  transactionHash: null,
  blockNumber: null,
  failure: null,
  requestedAt: at(7),
  succeededAt: null,
});
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;
const captureIt = (from: Snapshot, sequence: number, amountMinor: string, final = false) =>
  run(
    from,
    { type: 'PART_REQUESTED', at: at(10 + sequence), capture: part(sequence, amountMinor, final) },
    { type: 'PART_SUBMITTED', at: at(11 + sequence), sequence, transactionHash: tx(sequence) },
    { type: 'PART_SUCCEEDED', at: at(12 + sequence), sequence, transactionHash: tx(sequence), blockNumber: '101' },
  );

describe('an authorization that holds its funds', () => {
  it('goes from its checked signature straight to the escrow, and is held once the authorize is at depth', () => {
    const holding = toHolding();
    expect(holding.value).toEqual({ holding: 'prechecking' });
    expect(holding.hasTag('busy')).toBe(true);
    const held = toHeld();
    expect(held.value).toEqual({ held: 'open' });
    expect(held.context.hold).toMatchObject({ heldMinor: VALUE, authorizeTransactionHash: OUR_TX, captures: [] });
    // A plain authorization, for contrast, is stored.
    expect(
      send(
        run(
          initialTransition(authorizationMachine, input)[0],
          { type: 'DRAFTED', at: at(1), domain, authorization },
          { type: 'SIGNATURE_SUBMITTED', at: at(2) },
        ),
        { type: 'SIGNATURE_CHECKED', at: at(3), signature: SIGNATURE, check: { valid: true } },
      ).value,
    ).toEqual({ stored: 'idle' });
  });

  it('is declined when the precheck fails, having sent nothing', () => {
    const declined = send(toHolding(), { type: 'PRECHECKED', at: at(4), facts: goodFacts({ payerBalance: '1' }) });
    expect(declined.value).toBe('rejected');
    expect(declined.context.lastError?.code).toBe('insufficient_balance');
    expect(declined.context.hold?.authorizeTransactionHash).toBeNull();
  });

  it('captures in parts and voids the rest: captured, with every part and the release on record', () => {
    let held = captureIt(toHeld(), 1, '3000000');
    held = captureIt(held, 2, '2500000');
    expect(held.value).toEqual({ held: 'open' });
    held = send(held, { type: 'VOID', at: at(30), reason: 'order shipped short', by: 'merchant' });
    expect(held.value).toEqual({ held: 'voiding' });
    const done = send(held, { type: 'HOLD_RELEASED', at: at(31), kind: 'void', amountMinor: '7000000', transactionHash: OTHER_TX });
    expect(done.value).toBe('captured');
    expect(done.context.hold?.captures.map((c) => [c.sequence, c.stage, c.amountMinor])).toEqual([
      [1, 'succeeded', '3000000'],
      [2, 'succeeded', '2500000'],
    ]);
    expect(done.context.hold?.release).toMatchObject({ kind: 'void', amountMinor: '7000000' });
  });

  it('is captured when a part takes the last of it, voided when nothing was captured, expired at the window’s end', () => {
    expect(captureIt(toHeld(), 1, VALUE).value).toBe('captured');
    const voided = run(
      toHeld(),
      { type: 'VOID', at: at(20), reason: 'canceled', by: 'merchant' },
      { type: 'HOLD_RELEASED', at: at(21), kind: 'void', amountMinor: VALUE, transactionHash: OTHER_TX },
    );
    expect(voided.value).toBe('voided');
    const atDeadline = run(
      toHeld(),
      { type: 'VOID', at: at(20), reason: 'capture window closing', by: 'authcap' },
      { type: 'HOLD_RELEASED', at: at(21), kind: 'void', amountMinor: VALUE, transactionHash: OTHER_TX },
    );
    expect(atDeadline.value).toBe('expired');
    const reclaimed = send(toHeld(), { type: 'HOLD_RELEASED', at: at(21), kind: 'reclaim', amountMinor: VALUE, transactionHash: OTHER_TX });
    expect(reclaimed.value).toBe('expired');
  });

  it('keeps a failed part on record with why, and voids only while no part is under way', () => {
    const waiting = send(toHeld(), { type: 'PART_REQUESTED', at: at(10), capture: part(1, '1000000') });
    // A part waiting its turn: a void now would leave it never answered, so the void is refused.
    expectUnchanged(waiting, send(waiting, { type: 'VOID', at: at(10), reason: 'x', by: 'merchant' }));
    let held = send(waiting, { type: 'PART_SUBMITTED', at: at(11), sequence: 1, transactionHash: tx(1) });
    const refused = send(held, { type: 'VOID', at: at(12), reason: 'x', by: 'merchant' });
    expectUnchanged(held, refused);
    held = send(held, { type: 'PART_FAILED', at: at(13), sequence: 1, failure: { code: 'capture_reverted', message: 'reverted' } });
    expect(held.value).toEqual({ held: 'open' });
    expect(held.context.lastError?.code).toBe('capture_reverted');
    expect(held.context.hold?.captures[0]?.stage).toBe('failed');
    expect(send(held, { type: 'VOID', at: at(14), reason: 'x', by: 'merchant' }).value).toEqual({ held: 'voiding' });
  });

  it('ends canceled when the payer cancels before the authorize lands, expired when its deadline passes unused', () => {
    expect(send(toHolding(), { type: 'NONCE_CONSUMED_ONCHAIN', at: at(5), onchain: consumption('canceled') }).value).toBe('canceled');
    expect(send(toHolding(), { type: 'DEADLINE_REACHED', at: at(5), onchain: { status: 'unused' } }).value).toBe('expired');
    // Used: it is ours, on its way; the event at depth says held.
    const used = send(toHolding(), { type: 'DEADLINE_REACHED', at: at(5), onchain: consumption('used') });
    expect(used.value).toEqual({ holding: 'prechecking' });
  });

  it('takes no plain capture or cancel while held', () => {
    const held = toHeld();
    const accepted = acceptedEventTypes(held);
    expect(accepted).not.toContain('CAPTURE_REQUESTED');
    expect(accepted).not.toContain('CANCEL_REQUESTED');
    expectUnchanged(held, send(held, sampleEvents.CAPTURE_REQUESTED));
  });
});
