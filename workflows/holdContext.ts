// What the machine's hold actions do to its context (workflows/machineSetup.ts names them): each
// returns a new hold record, the ledger's arithmetic (workflows/holdLedger.ts) applied to a copy, so
// the machine stays pure and a refused event changes nothing.
import type { HoldRecord } from '../domain/holds.js';
import { capturableOnchainMinor, capturedMinor } from '../domain/holds.js';
import { HoldLedger } from './holdLedger.js';
import type { AuthorizationContext, AuthorizationEvent, EventOf } from './machineContext.js';
import { recorded } from './machineContext.js';

/** The hold's record after `change`, made on a copy (JSON-safe: no structuredClone in the workflow sandbox). */
function changed(context: AuthorizationContext, change: (ledger: HoldLedger) => void): HoldRecord | undefined {
  if (!context.hold) return undefined;
  const hold = JSON.parse(JSON.stringify(context.hold)) as HoldRecord;
  change(new HoldLedger(hold));
  return hold;
}

export function holdSubmitted(context: AuthorizationContext, event: EventOf<'HOLD_SUBMITTED'>): HoldRecord | undefined {
  return changed(context, (ledger) => {
    ledger.hold.authorizeTransactionHash = event.transactionHash;
  });
}

export function holdConfirmed(context: AuthorizationContext, event: EventOf<'HOLD_CONFIRMED'>): HoldRecord | undefined {
  return changed(context, (ledger) => {
    ledger.hold.authorizeTransactionHash = event.transactionHash;
    ledger.hold.heldMinor = event.amountMinor;
  });
}

export function partChanged(context: AuthorizationContext, event: AuthorizationEvent): HoldRecord | undefined {
  return changed(context, (ledger) => {
    if (event.type === 'PART_REQUESTED') ledger.hold.captures.push(event.capture);
    if (event.type === 'PART_SUBMITTED') ledger.submitted(event.sequence, event.transactionHash);
    if (event.type === 'PART_SUCCEEDED') ledger.succeeded(event.sequence, event);
    if (event.type === 'PART_FAILED') ledger.failed(event.sequence, recorded(event.failure.code, event.failure.message, event.at));
    if (event.type === 'HOLD_RELEASED') ledger.released(event.kind, event.amountMinor, event.transactionHash, event.at);
  });
}

/** A part event about a part this hold has (a stray one, say from a run before a reset, is refused). */
export function partIsKnown(context: AuthorizationContext, event: AuthorizationEvent): boolean {
  if (!context.hold) return false;
  if (event.type === 'PART_REQUESTED') return event.capture.sequence === context.hold.captures.length + 1;
  if (event.type === 'PART_SUBMITTED') return context.hold.captures.some((c) => c.sequence === event.sequence && c.stage === 'pending');
  if (event.type === 'PART_SUCCEEDED' || event.type === 'PART_FAILED')
    return context.hold.captures.some((c) => c.sequence === event.sequence && (c.stage === 'pending' || c.stage === 'submitted'));
  return true;
}

/** After this event, nothing is left to capture and no part is under way: the hold is spent. */
export function spentAfter(context: AuthorizationContext, event: AuthorizationEvent): boolean {
  if (!partIsKnown(context, event)) return false;
  const hold = partChanged(context, event);
  return !!hold && capturableOnchainMinor(hold) === 0n && !hold.captures.some((c) => c.stage === 'pending' || c.stage === 'submitted');
}

export function somethingCaptured(context: AuthorizationContext): boolean {
  return !!context.hold && capturedMinor(context.hold) > 0n;
}

/** No part is asked for and not yet done: a void may go (a part waiting its turn would otherwise never be answered). */
export function noCaptureUnderWay(context: AuthorizationContext): boolean {
  return !context.hold?.captures.some((c) => c.stage === 'pending' || c.stage === 'submitted');
}
