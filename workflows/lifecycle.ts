// Holds the machine's snapshot inside the workflow: sends events through the pure transition
// function, records the history of transitions, and keeps search attributes and the memo in step.
// The memo carries the resource as callers see it, so reads need no workflow query (and no worker).
import { ApplicationFailure, proxySinks, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { formatAmount } from '../domain/amount.js';
import { FIRST_RUN_MEMO_KEY, VIEW_MEMO_KEY, finalStates, type AuthorizationState, type AuthorizationView, type HistoryEntry } from '../domain/authorization.js';
import { authorizationTypedData, cancelAuthorizationTypedData } from '../domain/eip3009.js';
import type { CaptureRequest } from '../domain/activityContract.js';
import { AuthorizationNonceAttribute, AuthorizationStateAttribute, ValidBeforeAttribute } from '../domain/searchAttributes.js';
import type { AuthcapSinks } from '../domain/telemetry.js';
import { authorizationMachine, keptAmount, type AuthorizationContext, type AuthorizationEvent, type MachineInput } from './machine.js';
import { historyEntryFor } from './historyEntry.js';
import { isFailedCaptureAttempt } from './captureFailureReport.js';
import { eventId, type AuthcapEvent, type EventType } from '../domain/events.js';
import { RELEASE_MEMO_KEY } from '../domain/refunds.js';
import { eventTypesFor, stageOf } from './events.js';
import { assertWithinBudget, recordFailure, secondsUntilAllowed, type AttemptBudgetState, type AttemptKind } from './attemptBudget.js';
import { prepareSignerRecovery } from './signerRecovery.js';
import { MemoEventLog, type MemoEventLogState } from './memoEventLog.js';

type Snapshot = SnapshotFrom<typeof authorizationMachine>;

/** Distributes Omit over the event union, so callers pass events without `at`. */
export type Command = AuthorizationEvent extends infer E ? (E extends AuthorizationEvent ? Omit<E, 'at'> : never) : never;

/** What continue-as-new carries to the next run: the machine's state, not its events. */
export interface PersistedLifecycle {
  value: Snapshot['value'];
  context: AuthorizationContext;
  history: HistoryEntry[];
  captureAttempts: number;
  cancelAttempts: number;
  /** Events emitted so far. */
  eventSequence: number;
  /** Failed attempts per command. */
  attempts: AttemptBudgetState;
  /** The memo event log's own state (the events themselves are in the memo). */
  eventLog: MemoEventLogState;
}

const { telemetry } = proxySinks<AuthcapSinks>();

export function stateOf(snapshot: Snapshot): AuthorizationState {
  const value = snapshot.value;
  return (typeof value === 'string' ? value : Object.keys(value)[0]) as AuthorizationState;
}

export class Lifecycle {
  private snapshot: Snapshot;
  readonly history: HistoryEntry[];
  /** Attempts so far: each gets its own relayer request id, so a reverted one is never handed back. */
  captureAttempts = 0;
  cancelAttempts = 0;
  eventSequence = 0;
  /** Failed attempts per command: what the update validators' budget reads. */
  private attempts: AttemptBudgetState = {};
  /** A partial capture's release is being carried (by the capture command or the main loop): not twice. */
  releaseDriven = false;
  /** Events recorded since the memo was last written: they go with the next write. */
  private readonly outbox: AuthcapEvent[] = [];
  /** Transitions that matter to an order service become events, kept in this workflow's memo. */
  private readonly eventLog: MemoEventLog;

  constructor(
    input: MachineInput | PersistedLifecycle,
    private readonly now: () => string,
  ) {
    if ('context' in input) {
      this.snapshot = authorizationMachine.resolveState({ value: input.value, context: input.context });
      this.history = [...input.history];
      this.captureAttempts = input.captureAttempts;
      this.cancelAttempts = input.cancelAttempts;
      this.eventSequence = input.eventSequence;
      this.attempts = input.attempts;
      this.eventLog = new MemoEventLog(input.eventLog);
      if (Object.keys(this.attempts).length > 0) prepareSignerRecovery();
    } else {
      [this.snapshot] = initialTransition(authorizationMachine, input);
      this.history = [{ state: this.state, at: this.now(), event: 'REQUESTED', actor: 'merchant' }];
      this.eventLog = new MemoEventLog();
    }
    this.publish();
  }

  get state(): AuthorizationState {
    return stateOf(this.snapshot);
  }

  get context() {
    return this.snapshot.context;
  }

  get isFinal(): boolean {
    return finalStates.includes(this.state);
  }

  /** True when a nested state such as `capturing` or `drafted.verifyingSignature` is active. */
  matches(state: string | Record<string, string>): boolean {
    return this.snapshot.matches(state as never);
  }

  /** No command is half-way through: the machine tags every in-between state `busy`. */
  get isResting(): boolean {
    return !this.snapshot.hasTag('busy');
  }

  /** Would this command be accepted now? Asks the machine, so validators and transitions agree. */
  can(command: Command): boolean {
    return this.snapshot.can({ ...command, at: this.now() } as AuthorizationEvent);
  }

  /** Throws `invalid_state` (for update validators) when the machine would ignore the command. */
  assertCan(command: Command, action: string): void {
    if (!this.can(command)) {
      throw ApplicationFailure.create({
        type: 'invalid_state',
        nonRetryable: true,
        message: `cannot ${action}: the authorization is ${this.describeState()}`,
      });
    }
  }

  /** @param at when it happened, when an activity saw it earlier than this activation (default: now). */
  send(command: Command, at: string = this.now()): void {
    const before = this.snapshot;
    const from = this.state;
    const event = { ...command, at } as AuthorizationEvent;
    [this.snapshot] = transition(authorizationMachine, this.snapshot, event);
    if (this.snapshot === before || (this.snapshot.value === before.value && this.snapshot.context === before.context)) return;
    const to = this.state;
    if (command.type === 'CAPTURE_REQUESTED') this.captureAttempts += 1;
    if (command.type === 'CANCEL_REQUESTED') this.cancelAttempts += 1;
    // One line per change of state, carrying what caused it; a failed attempt that leaves the state
    // as it was shows as lastError instead, so a refused request changes nothing callers see.
    if (to !== from) this.history.push(historyEntryFor(event, to, before.context, this.snapshot.context));
    if (to !== from) {
      upsertSearchAttributes([{ key: AuthorizationStateAttribute, value: to }]);
      telemetry.transition({ orderId: this.context.orderId, network: this.context.chain?.network, from, to, event: event.type });
    }
    if ((command.type === 'DRAFTED' || command.type === 'PRESIGNED_CHECKED') && this.context.authorization) {
      upsertSearchAttributes([{ key: ValidBeforeAttribute, value: new Date(Number(this.context.authorization.validBefore) * 1000) }]);
    }
    if (command.type === 'CAPTURE_CONFIRMED') this.reportCaptureTiming();
    // A sink call: no command, nothing in history, not called on replay.
    if (isFailedCaptureAttempt(before, this.snapshot, command.type)) {
      telemetry.captureFailed({ orderId: this.context.orderId, network: this.context.chain?.network, code: this.context.lastError?.code ?? 'internal_error' });
    }
    // Recorded first, so a memo event log writes the events with the view they describe.
    this.recordEventsFor(stageOf(before.value), stageOf(this.snapshot.value), event, before.context);
    this.publish();
  }

  /** Each event is numbered in the workflow's own state, so a replay names it the same way. */
  private recordEventsFor(from: string, to: string, event: AuthorizationEvent, before: AuthorizationContext): void {
    // A partial capture's release is a refund: it is announced when it starts and when it succeeds,
    // before the capture it completes.
    const release = this.context.release;
    const releaseEvents: EventType[] =
      event.type === 'RELEASE_UPDATED' && release
        ? [...(!before.release ? (['refund.created'] as const) : []), ...(release.stage === 'succeeded' ? (['refund.succeeded'] as const) : [])]
        : [];
    for (const type of [...releaseEvents, ...eventTypesFor(from, to, event.type)]) {
      this.eventSequence += 1;
      const lastError = this.context.lastError;
      const id = eventId(workflowInfo().firstExecutionRunId, this.eventSequence);
      // The resource id is added by publicEvent when the event leaves Temporal (ids are built outside the sandbox).
      const object = { id: '', ...this.view() };
      this.outbox.push(
        type.startsWith('refund.')
          ? ({
              id,
              type,
              createdAt: event.at,
              orderId: this.context.orderId,
              data: {
                object: release,
                authorization: {
                  id: '',
                  orderId: object.orderId,
                  state: object.state,
                  amount: object.amount,
                  amountCaptured: object.amountCaptured,
                  amountRefunded: object.amountRefunded,
                },
              },
            } as unknown as AuthcapEvent)
          : ({
              id,
              type,
              createdAt: event.at,
              orderId: this.context.orderId,
              data: { object, ...(type === 'authorization.capture_failed' && lastError ? { reason: lastError } : {}) },
            } as AuthcapEvent),
      );
    }
  }

  /** An attempt of `kind` failed and the authorization is still open: it counts against the budget. */
  recordFailedAttempt(kind: AttemptKind): void {
    if (this.isFinal) return;
    this.attempts = recordFailure(this.attempts, kind, Date.now());
    // A spent budget screens signatures by their signer: have the recovery ready by then.
    prepareSignerRecovery();
  }

  /** Whether another attempt of `kind` would be accepted without looking at who made it. */
  isWithinBudget(kind: AttemptKind): boolean {
    return secondsUntilAllowed(this.attempts, kind, Date.now()) === 0;
  }

  /** For update validators: throws `too_many_attempts` while `kind`'s budget is spent. */
  assertWithinBudget(kind: AttemptKind): void {
    assertWithinBudget(this.attempts, kind, Date.now());
  }

  /** What the log watcher searches by: a digest of (payer, nonce), computed by the activity that made it. */
  indexNonce(nonceKey: string): void {
    upsertSearchAttributes([{ key: AuthorizationNonceAttribute, value: nonceKey }]);
  }

  describeState(): string {
    if (this.matches({ capturing: 'releasing' })) return 'capturing: the part not kept is going back to the payer';
    if (this.matches('capturing')) return 'capturing: a capture transaction is in flight';
    if (this.matches('canceling')) return 'canceling: a cancellation is being relayed';
    if (this.matches({ drafted: 'verifyingSignature' })) return 'drafted: a signature is being verified';
    if (this.matches({ stored: 'prechecking' })) return 'stored: a capture is being prechecked';
    if (this.matches({ stored: 'verifyingCancellation' })) return 'stored: a cancellation signature is being verified';
    return this.state;
  }

  /** A partial capture's release as it stands: the refunds procedure resumes it from here. */
  get release() {
    return this.context.release ?? null;
  }

  captureRequest(): CaptureRequest {
    const { authorization, signature, primaryType } = this.context;
    if (!authorization || !signature) throw new Error('no stored authorization to capture');
    return { primaryType, authorization, signature };
  }

  persisted(): PersistedLifecycle {
    return {
      value: this.snapshot.value,
      context: this.snapshot.context,
      history: [...this.history],
      captureAttempts: this.captureAttempts,
      cancelAttempts: this.cancelAttempts,
      eventSequence: this.eventSequence,
      attempts: this.attempts,
      eventLog: this.eventLog.state(),
    };
  }

  /** What the merchant holds: kept once captured; all of it while a partial capture's difference goes back. */
  private amountCaptured(): string {
    const c = this.context;
    if (this.state === 'captured') return c.capture?.amount ?? formatAmount(BigInt(keptAmount(c)));
    if (this.matches({ capturing: 'releasing' })) return formatAmount(BigInt(c.value));
    return '0';
  }

  view(): AuthorizationView {
    const c = this.context;
    return {
      orderId: c.orderId,
      ...(c.chain ? { network: c.chain.network, token: { address: c.chain.token, symbol: c.chain.symbol, decimals: c.chain.decimals } } : {}),
      state: this.state,
      primaryType: c.primaryType,
      amount: formatAmount(BigInt(c.value)),
      amountCaptured: this.amountCaptured(),
      amountCapturing: this.state === 'capturing' ? formatAmount(BigInt(keptAmount(c))) : null,
      amountRefunded: '0',
      authorization: c.authorization,
      domain: c.domain,
      typedData: c.domain && c.authorization && this.state === 'drafted' ? authorizationTypedData(c.domain, c.primaryType, c.authorization) : null,
      // Offered while a payer cancellation can be accepted: the authorization is stored and unused.
      cancellationTypedData:
        c.domain && c.authorization && this.state === 'stored'
          ? cancelAuthorizationTypedData(c.domain, { authorizer: c.authorization.from, nonce: c.authorization.nonce })
          : null,
      capture: c.capture,
      cancellation: c.cancellation,
      void: c.void,
      lastError: c.lastError,
      history: [...this.history],
    };
  }

  /** The view in the memo: GET reads it with one describe call, whether or not a worker is up. */
  private publish(): void {
    // Events recorded since the last write go with this one, with their search attributes.
    const events = this.eventLog.record(this.outbox.splice(0), this.now());
    // The first run id names the attempt in resource ids; visibility lists do not carry it, the memo does.
    upsertMemo({
      [VIEW_MEMO_KEY]: this.view(),
      [FIRST_RUN_MEMO_KEY]: workflowInfo().firstExecutionRunId,
      // A partial capture's release, listed among the authorization's refunds (absent when there is none).
      ...(this.context.release ? { [RELEASE_MEMO_KEY]: this.context.release } : {}),
      ...events.memo,
    });
    if (events.searchAttributes.length) upsertSearchAttributes(events.searchAttributes);
  }

  private reportCaptureTiming(): void {
    const capture = this.context.capture;
    const requested = capture?.submittedAt;
    if (!capture?.confirmedAt || !requested) return;
    const since = (at: string | null) => (at ? Date.parse(at) - Date.parse(requested) : null);
    telemetry.captureConfirmed({
      orderId: this.context.orderId,
      network: this.context.chain?.network,
      preconfirmedMs: since(capture.preconfirmedAt),
      capturedMs: since(capture.confirmedAt)!,
    });
  }
}
