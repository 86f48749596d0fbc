// An authorization's state inside its workflow: the machine's snapshot, moved only through the pure
// transition function (workflows/machine.ts decides; nothing here does). Each change is written down
// where it is read: a history line, the published view and search attributes
// (workflows/authorizationView.ts), the events (workflows/authorizationEvents.ts) and the metrics
// (workflows/transitionReports.ts). What a continue-as-new carries is `persisted()`.
import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { initialTransition, transition } from 'xstate';
import type { CaptureRequest } from '../domain/activityContract.js';
import { finalStates, type AuthorizationState, type AuthorizationView, type HistoryEntry } from '../domain/authorization.js';
import { assertWithinBudget, recordFailure, secondsUntilAllowed, type AttemptBudgetState, type AttemptKind } from './attemptBudget.js';
import { AuthorizationEvents, type AuthorizationEventsState } from './authorizationEvents.js';
import { authorizationView, indexTransition, publishView, stateOf, type Snapshot } from './authorizationView.js';
import { historyEntryFor } from './historyEntry.js';
import { authorizationMachine, type AuthorizationContext, type AuthorizationEvent, type MachineInput } from './machine.js';
import { prepareSignerRecovery } from './signerRecovery.js';
import { reportTransition } from './transitionReports.js';

/** Distributes Omit over the event union, so callers pass events without `at`. */
export type Command = AuthorizationEvent extends infer E ? (E extends AuthorizationEvent ? Omit<E, 'at'> : never) : never;

/** What continue-as-new carries to the next run: the machine's state, not its events. */
export interface PersistedLifecycle extends AuthorizationEventsState {
  value: Snapshot['value'];
  context: AuthorizationContext;
  history: HistoryEntry[];
  captureAttempts: number;
  cancelAttempts: number;
  /** Failed attempts per command. */
  attempts: AttemptBudgetState;
}

export class Lifecycle {
  private snapshot: Snapshot;
  readonly history: HistoryEntry[];
  /** Attempts so far: each gets its own relayer request id, so a reverted one is never handed back. */
  captureAttempts = 0;
  cancelAttempts = 0;
  /** Failed attempts per command: what the update validators' budget reads. */
  private attempts: AttemptBudgetState = {};
  /** A partial capture's release is being carried (by the capture command or the main loop): not twice. */
  releaseDriven = false;
  private readonly events: AuthorizationEvents;

  private constructor(
    snapshot: Snapshot,
    history: HistoryEntry[],
    private readonly now: () => string,
    carried?: PersistedLifecycle,
  ) {
    this.snapshot = snapshot;
    this.history = history;
    this.events = new AuthorizationEvents(carried);
    if (carried) {
      this.captureAttempts = carried.captureAttempts;
      this.cancelAttempts = carried.cancelAttempts;
      this.attempts = carried.attempts;
      if (Object.keys(this.attempts).length > 0) prepareSignerRecovery();
    }
    this.publish();
  }

  /** A new attempt: `drafting`, with the merchant's request as its first history line. */
  static begin(input: MachineInput, now: () => string): Lifecycle {
    const [snapshot] = initialTransition(authorizationMachine, input);
    return new Lifecycle(snapshot, [{ state: stateOf(snapshot), at: now(), event: 'REQUESTED', actor: 'merchant' }], now);
  }

  /** The attempt as the previous run left it (continue-as-new). */
  static resume(carried: PersistedLifecycle, now: () => string): Lifecycle {
    const snapshot = authorizationMachine.resolveState({ value: carried.value, context: carried.context });
    return new Lifecycle(snapshot, [...carried.history], now, carried);
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
    indexTransition(from, to, event.type, this.context);
    reportTransition(before, this.snapshot, from, to, event);
    // Recorded first, so the events are written with the view they describe.
    this.events.record({ from: before.value, to: this.snapshot.value, event, before: before.context, after: this.context, view: () => this.view() });
    this.publish();
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

  describeState(): string {
    if (this.matches({ capturing: 'releasing' })) return 'capturing: the part not kept is going back to the payer';
    if (this.matches('capturing')) return 'capturing: a capture transaction is in flight';
    if (this.matches('canceling')) return 'canceling: a cancellation is being relayed';
    if (this.matches({ drafted: 'verifyingSignature' })) return 'drafted: a signature is being verified';
    if (this.matches({ stored: 'prechecking' })) return 'stored: a capture is being prechecked';
    if (this.matches({ stored: 'verifyingCancellation' })) return 'stored: a cancellation signature is being verified';
    return this.state;
  }

  captureRequest(): CaptureRequest {
    const { authorization, signature, primaryType } = this.context;
    if (!authorization || !signature) throw new Error('no stored authorization to capture');
    return { primaryType, authorization, signature };
  }

  view(): AuthorizationView {
    return authorizationView(this.snapshot, this.history, workflowInfo().firstExecutionRunId);
  }

  persisted(): PersistedLifecycle {
    return {
      value: this.snapshot.value,
      context: this.snapshot.context,
      history: [...this.history],
      captureAttempts: this.captureAttempts,
      cancelAttempts: this.cancelAttempts,
      attempts: this.attempts,
      ...this.events.persisted(),
    };
  }

  /** The view in the memo, with the events recorded since the last write. */
  private publish(): void {
    publishView(this.view(), this.context, this.events.take(this.now()));
  }
}
