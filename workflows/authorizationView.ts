// The authorization as callers see it (a read, an update's answer, an event's object), built from the
// machine's snapshot; and where it is published: the memo, so a read needs one describe call and no
// worker, and the search attributes operators find authorizations by.
import { upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { SnapshotFrom } from 'xstate';
import { decimalsOf, formatAmount } from '../domain/amount.js';
import {
  FIRST_RUN_MEMO_KEY,
  VIEW_MEMO_KEY,
  type AuthorizationState,
  type AuthorizationView,
  type CaptureView,
  type HistoryEntry,
  type HoldView,
} from '../domain/authorization.js';
import { voidDeadline } from '../domain/hold.js';
import { captureId } from '../domain/captures.js';
import { capturableMinor, capturedMinor, type HoldRecord } from '../domain/holds.js';
import { authorizationTypedData, cancelAuthorizationTypedData } from '../domain/eip3009.js';
import { RELEASE_MEMO_KEY } from '../domain/refunds.js';
import { AuthorizationNonceAttribute, AuthorizationStateAttribute, ValidBeforeAttribute } from '../domain/searchAttributes.js';
import { keptAmount, type authorizationMachine, type AuthorizationContext } from './machine.js';
import type { RecordedEvents } from './authorizationEvents.js';

export type Snapshot = SnapshotFrom<typeof authorizationMachine>;

/** The top-level state callers see (`capturing`, not `capturing.submitted`). */
export function stateOf(snapshot: Snapshot): AuthorizationState {
  const value = snapshot.value;
  return (typeof value === 'string' ? value : Object.keys(value)[0]) as AuthorizationState;
}

export function authorizationView(snapshot: Snapshot, history: readonly HistoryEntry[], firstRunId: string): AuthorizationView {
  const c = snapshot.context;
  const state = stateOf(snapshot);
  const amount = (minor: string) => formatAmount(BigInt(minor), decimalsOf(c.chain));
  // A plain authorization's capture fields are derived outside (domain/captures.ts): its history carries none of them.
  if (c.hold) return { ...plainView(snapshot, history, state, amount), ...holdFields(c.hold, snapshot.matches({ held: 'open' }), amount, firstRunId) };
  return plainView(snapshot, history, state, amount);
}

type Amount = (minor: string) => string;

function plainView(snapshot: Snapshot, history: readonly HistoryEntry[], state: AuthorizationState, amount: Amount): AuthorizationView {
  const c = snapshot.context;
  return {
    orderId: c.orderId,
    ...(c.chain ? { network: c.chain.network, token: { address: c.chain.token, symbol: c.chain.symbol, decimals: c.chain.decimals } } : {}),
    state,
    primaryType: c.primaryType,
    amount: amount(c.value),
    amountCaptured: amountCaptured(snapshot, c, amount),
    amountCapturing: state === 'capturing' ? amount(keptAmount(c)) : null,
    amountRefunded: '0',
    authorization: c.authorization,
    domain: c.domain,
    typedData: c.domain && c.authorization && state === 'drafted' ? authorizationTypedData(c.domain, c.primaryType, c.authorization) : null,
    // Offered while a payer cancellation can be accepted: the authorization is stored and unused.
    cancellationTypedData:
      c.domain && c.authorization && state === 'stored'
        ? cancelAuthorizationTypedData(c.domain, { authorizer: c.authorization.from, nonce: c.authorization.nonce })
        : null,
    capture: c.capture,
    cancellation: c.cancellation,
    void: c.void,
    lastError: c.lastError,
    history: [...history],
  };
}

/** A held payment's amounts, parts and escrow, from its hold record. */
/** `open`: held and taking captures (not while its void is on the way). */
function holdFields(hold: HoldRecord, open: boolean, amount: Amount, firstRunId: string) {
  const at = (seconds: string | number) => new Date(Number(seconds) * 1000).toISOString();
  const view: HoldView = {
    paymentInfoHash: hold.paymentInfoHash,
    amountHeld: amount(hold.heldMinor),
    authorizeTransactionHash: hold.authorizeTransactionHash,
    captureBefore: at(hold.terms.authorizationExpiry),
    voidAt: at(voidDeadline({ authorizationExpiry: Number(hold.terms.authorizationExpiry) })),
    refundBefore: at(hold.terms.refundExpiry),
    terms: { ...hold.terms },
    release: hold.release
      ? { kind: hold.release.kind, amount: amount(hold.release.amountMinor), transactionHash: hold.release.transactionHash, at: hold.release.at }
      : null,
  };
  return {
    amountCaptured: amount(capturedMinor(hold).toString()),
    amountCapturing: null,
    amountCapturable: open ? amount(capturableMinor(hold).toString()) : '0',
    captures: hold.captures.map(
      (part): CaptureView => ({
        id: captureId(firstRunId, part.sequence),
        amount: amount(part.amountMinor),
        final: part.final,
        status: part.stage,
        transactionHash: part.transactionHash,
        blockNumber: part.blockNumber,
        failure: part.failure,
        requestedAt: part.requestedAt,
        succeededAt: part.succeededAt,
      }),
    ),
    hold: view,
  };
}

/** What the merchant holds: kept once captured; all of it while a partial capture's difference goes back. */
function amountCaptured(snapshot: Snapshot, c: AuthorizationContext, amount: (minor: string) => string): string {
  if (stateOf(snapshot) === 'captured') return c.capture?.amount ?? amount(keptAmount(c));
  if (snapshot.matches({ capturing: 'releasing' })) return amount(c.value);
  return '0';
}

/**
 * The view in the memo (GET reads it with one describe call, whether or not a worker is up), with the
 * events recorded since the last write and their search attributes.
 */
export function publishView(view: AuthorizationView, context: AuthorizationContext, events: RecordedEvents): void {
  upsertMemo({
    [VIEW_MEMO_KEY]: view,
    // The first run id names the attempt in resource ids; visibility lists do not carry it, the memo does.
    [FIRST_RUN_MEMO_KEY]: workflowInfo().firstExecutionRunId,
    // A partial capture's release, listed among the authorization's refunds (absent when there is none).
    ...(context.release ? { [RELEASE_MEMO_KEY]: context.release } : {}),
    ...events.memo,
  });
  if (events.searchAttributes.length) upsertSearchAttributes(events.searchAttributes);
}

/** The search attributes a transition changes: the state operators filter by, and the deadline once it is known. */
export function indexTransition(from: AuthorizationState, to: AuthorizationState, eventType: string, context: AuthorizationContext): void {
  const changed: SearchAttributeUpdatePair[] = [];
  if (to !== from) changed.push({ key: AuthorizationStateAttribute, value: to });
  if ((eventType === 'DRAFTED' || eventType === 'PRESIGNED_CHECKED') && context.authorization) {
    changed.push({ key: ValidBeforeAttribute, value: new Date(Number(context.authorization.validBefore) * 1000) });
  }
  if (changed.length > 0) upsertSearchAttributes(changed);
}

/** What the log watcher searches by: a digest of (payer, nonce), computed by the activity that made it. */
export function indexNonce(nonceKey: string): void {
  upsertSearchAttributes([{ key: AuthorizationNonceAttribute, value: nonceKey }]);
}
