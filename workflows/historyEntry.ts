// One line of an authorization's history, as operators read it (`authcap history`): what happened,
// who or what caused it, why, and the transaction that proves it.
import type { AuthorizationState, HistoryActor, HistoryEntry } from '../domain/authorization.js';
import { decimalsOf, formatAmount } from '../domain/amount.js';
import type { AuthorizationContext, AuthorizationEvent } from './machine.js';

const ACTOR: Record<AuthorizationEvent['type'], HistoryActor> = {
  DRAFTED: 'authcap',
  PRESIGNED_CHECKED: 'payer',
  SIGNATURE_SUBMITTED: 'payer',
  SIGNATURE_CHECKED: 'payer',
  CAPTURE_REQUESTED: 'merchant',
  PRECHECKED: 'chain',
  CAPTURE_SUBMITTED: 'authcap',
  CAPTURE_PRECONFIRMED: 'chain',
  CAPTURE_CONFIRMED: 'chain',
  CAPTURE_REORGED: 'chain',
  CAPTURE_FAILED: 'chain',
  CANCEL_REQUESTED: 'payer',
  CANCEL_SIGNATURE_CHECKED: 'payer',
  CANCEL_SUBMITTED: 'authcap',
  CANCEL_CONFIRMED: 'chain',
  CANCEL_FAILED: 'chain',
  VOID: 'operator',
  DEADLINE_REACHED: 'authcap',
  NONCE_CONSUMED_ONCHAIN: 'chain',
  COMMAND_FAILED: 'authcap',
  RELEASE_UPDATED: 'chain',
  HOLD_SUBMITTED: 'authcap',
  HOLD_CONFIRMED: 'chain',
  HOLD_FAILED: 'chain',
  PART_REQUESTED: 'merchant',
  PART_SUBMITTED: 'authcap',
  PART_SUCCEEDED: 'chain',
  PART_FAILED: 'chain',
  HOLD_RELEASED: 'chain',
};

export function historyEntryFor(event: AuthorizationEvent, state: AuthorizationState, before: AuthorizationContext, after: AuthorizationContext): HistoryEntry {
  const entry: HistoryEntry = { state, at: event.at, event: event.type, actor: ACTOR[event.type] };
  if (event.type === 'VOID') {
    entry.actor = event.by;
    entry.reason = event.reason;
  }
  // A new lastError is the reason this step went the way it did.
  if (after.lastError && after.lastError !== before.lastError) entry.reason = `${after.lastError.code}: ${after.lastError.message}`;
  if (event.type === 'RELEASE_UPDATED') {
    // A partial capture ends when what was not kept is back with the payer: that refund proves it.
    entry.reason = `partial capture: kept ${after.capture?.amount ?? '?'}, returned ${formatAmount(BigInt(event.release.amountMinor), decimalsOf(after.chain))} to the payer`;
    if (event.release.transactionHash) entry.transactionHash = event.release.transactionHash;
    return entry;
  }
  const tx =
    transactionOf(event) ??
    (after.capture !== before.capture ? after.capture?.transactionHash : undefined) ??
    (after.cancellation !== before.cancellation ? (after.cancellation?.transactionHash ?? undefined) : undefined);
  if (tx) entry.transactionHash = tx;
  return entry;
}

function transactionOf(event: AuthorizationEvent): `0x${string}` | undefined {
  switch (event.type) {
    case 'CAPTURE_SUBMITTED':
    case 'CAPTURE_CONFIRMED':
    case 'CANCEL_SUBMITTED':
    case 'CANCEL_CONFIRMED':
      return event.transactionHash;
    case 'DEADLINE_REACHED':
    case 'NONCE_CONSUMED_ONCHAIN':
      return event.onchain.status === 'unused' ? undefined : event.onchain.transactionHash;
    default:
      return undefined;
  }
}
