// A held payment's life in its workflow (docs/holds.md): the parts asked for go to the chain one at a
// time, each through the relayer with what the escrow must still hold for it, and each counts once its
// own event is at depth; a void (the merchant's, an operator's, or authcap's own before the capture
// window ends) returns the rest. Loaded only by authorizations that hold (a dynamic import): the
// others do not pay for it.
import { condition, sleep, workflowInfo } from '@temporalio/workflow';
import type { Hex } from 'viem';
import type { EscrowCall } from '../domain/escrowCall.js';
import { capturableOnchainMinor, type HoldCapture, type HoldRecord } from '../domain/holds.js';
import { voidDeadline } from '../domain/hold.js';
import { localReads } from './activities.js';
import { failureOf } from './failures.js';
import { followEscrowUnlessTroubled } from './followEscrow.js';
import { HoldLedger } from './holdLedger.js';
import type { Lifecycle } from './lifecycle.js';
import { AUTHCAP_DEADLINE_VOID } from './machineSetup.js';
import type { Relay } from './relayClient.js';

/** A part or void is followed for at most this long; past it the chain is asked again. */
const FOLLOW_MS = 30 * 60_000;

/** One step of a held payment: a part, the void, or a wait until something is asked or the void deadline comes. */
export async function driveHeld(lifecycle: Lifecycle, relay: Relay, news: () => boolean, timers: HoldTimers = {}): Promise<void> {
  const hold = lifecycle.context.hold;
  if (!hold || !lifecycle.matches('held')) return;
  const next = new HoldLedger(JSON.parse(JSON.stringify(hold)) as HoldRecord).next();
  if (next && lifecycle.matches({ held: 'open' })) return capturePart(lifecycle, relay, hold, next.capture, next.expectCapturableMinor);
  if (lifecycle.matches({ held: 'voiding' })) return releaseRest(lifecycle, relay, hold);
  const deadline = voidDeadline({ authorizationExpiry: Number(hold.terms.authorizationExpiry) }) * 1000;
  const finalDone = new HoldLedger(JSON.parse(JSON.stringify(hold)) as HoldRecord).releaseDue;
  if (finalDone || Date.now() >= deadline) {
    // A final part succeeded, or the capture window is about to close: what is left goes back.
    const reason = finalDone ? 'the final capture was made' : 'the capture window is closing';
    lifecycle.send({ type: 'VOID', reason, by: AUTHCAP_DEADLINE_VOID });
    return;
  }
  // One durable timer to the void deadline per run, not one per wait: every wait would otherwise start a
  // timer and cancel it when a part came first.
  if (!timers.voidDue) {
    const due: { reached: boolean } = { reached: false };
    timers.voidDue = due;
    void sleep(Math.max(deadline - Date.now(), 1)).then(() => (due.reached = true));
  }
  const due = timers.voidDue;
  await condition(() => due.reached || news() || !lifecycle.matches({ held: 'open' }) || new HoldLedger(lifecycle.context.hold!).next() !== undefined);
}

/** The run's timers of a hold, kept by its caller for the run's life. */
export interface HoldTimers {
  voidDue?: { reached: boolean };
}

async function capturePart(lifecycle: Lifecycle, relay: Relay, hold: HoldRecord, part: HoldCapture, expectCapturableMinor: string): Promise<void> {
  const call: EscrowCall = {
    kind: 'escrow',
    action: 'capture',
    paymentInfo: hold.terms,
    amount: part.amountMinor,
    expect: { capturable: expectCapturableMinor },
  };
  const followed = await follow(lifecycle, relay, hold, call, `part:${part.sequence}`);
  // Refused or lost, it may have landed all the same: the escrow holding exactly the part less is the sign.
  const landed = (capturable: bigint) => capturable === BigInt(expectCapturableMinor) - BigInt(part.amountMinor);
  const outcome = 'result' in followed ? followed : ((await landedAfterAll(lifecycle, relay, hold, call, `part:${part.sequence}`, landed)) ?? followed);
  if ('result' in outcome && outcome.result.event === 'PaymentCaptured') {
    const { transactionHash, blockNumber, confirmedAt } = outcome.result;
    lifecycle.send({ type: 'PART_SUBMITTED', sequence: part.sequence, transactionHash });
    lifecycle.send({ type: 'PART_SUCCEEDED', sequence: part.sequence, transactionHash, blockNumber }, confirmedAt);
    return;
  }
  const answer = relay.answer(requestIdOf(part.sequence));
  lifecycle.send({
    type: 'PART_FAILED',
    sequence: part.sequence,
    failure: answer?.failure ?? ('error' in outcome ? failureOf(outcome.error) : { code: 'capture_reverted', message: 'the relayer did not send the capture' }),
  });
}

async function releaseRest(lifecycle: Lifecycle, relay: Relay, hold: HoldRecord): Promise<void> {
  const capturable = capturableOnchainMinor(hold).toString();
  const call: EscrowCall = { kind: 'escrow', action: 'void', paymentInfo: hold.terms, expect: { capturable } };
  const followed = await follow(lifecycle, relay, hold, call, 'void');
  // Refused with nothing left capturable: our void landed before, or the payer reclaimed after the capture
  // window (authcap down past it): either event releases the rest, and is looked for without sending.
  const outcome = 'result' in followed ? followed : ((await landedAfterAll(lifecycle, relay, hold, call, 'void', (left) => left === 0n)) ?? followed);
  if ('result' in outcome && (outcome.result.event === 'PaymentVoided' || outcome.result.event === 'PaymentReclaimed')) {
    const { event, amountMinor, transactionHash, confirmedAt } = outcome.result;
    lifecycle.send({ type: 'HOLD_RELEASED', kind: event === 'PaymentVoided' ? 'void' : 'reclaim', amountMinor, transactionHash }, confirmedAt);
    return;
  }
  lifecycle.send({
    type: 'COMMAND_FAILED',
    failure: 'error' in outcome ? failureOf(outcome.error) : { code: 'capture_reverted', message: 'the relayer did not send the void' },
  });
}

/** When the escrow shows the call's effect (`landed` of what is capturable now), its event is followed without sending anything. */
async function landedAfterAll(lifecycle: Lifecycle, relay: Relay, hold: HoldRecord, call: EscrowCall, step: string, landed: (capturable: bigint) => boolean) {
  const facts = await localReads.escrowRefundFacts({ paymentInfo: hold.terms });
  if (!landed(BigInt(facts.capturableMinor))) return undefined;
  return follow(lifecycle, relay, hold, call, `${step}:found`, true);
}

const requestIdOf = (step: number | string) => `${workflowInfo().workflowId}:${typeof step === 'number' ? `part:${step}` : step}`;

function follow(lifecycle: Lifecycle, relay: Relay, hold: HoldRecord, call: EscrowCall, step: string, followOnly = false) {
  const { workflowId, runId } = workflowInfo();
  const counted = hold.captures.flatMap((c) => (c.stage === 'succeeded' && c.transactionHash ? [c.transactionHash as Hex] : []));
  const request = { requestId: `${workflowId}:${step}`, replyTo: { workflowId, runId }, call, counted, ...(followOnly ? { followOnly } : {}) };
  return followEscrowUnlessTroubled(relay, request, hold.paymentInfoHash, {
    scheduleToCloseTimeout: FOLLOW_MS,
    summary: `${call.action} of ${lifecycle.context.orderId}`,
  });
}
