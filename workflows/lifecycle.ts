// Holds the machine's snapshot inside the workflow: sends events through the pure transition
// function, records the history of top-level states and keeps search attributes in step.
import { ApplicationFailure, upsertSearchAttributes } from '@temporalio/workflow';
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { formatAmount } from '../domain/amount.js';
import { finalStates, type AuthorizationState, type AuthorizationView, type HistoryEntry } from '../domain/authorization.js';
import { authorizationTypedData, cancelAuthorizationTypedData } from '../domain/eip3009.js';
import type { CaptureRequest } from '../domain/activityContract.js';
import { AuthorizationNonceAttribute, AuthorizationStateAttribute, ValidBeforeAttribute } from '../domain/searchAttributes.js';
import { authorizationMachine, type AuthorizationEvent, type MachineInput } from './machine.js';

type Snapshot = SnapshotFrom<typeof authorizationMachine>;

/** Distributes Omit over the event union, so callers pass events without `at`. */
type Command = AuthorizationEvent extends infer E ? (E extends AuthorizationEvent ? Omit<E, 'at'> : never) : never;

export function stateOf(snapshot: Snapshot): AuthorizationState {
  const value = snapshot.value;
  return (typeof value === 'string' ? value : Object.keys(value)[0]) as AuthorizationState;
}

export class Lifecycle {
  private snapshot: Snapshot;
  readonly history: HistoryEntry[] = [];

  constructor(input: MachineInput, private readonly now: () => string) {
    [this.snapshot] = initialTransition(authorizationMachine, input);
    this.history.push({ state: this.state, at: this.now() });
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

  /** No command is half-way through (no verification, precheck, capture or cancellation in flight). */
  get isResting(): boolean {
    return !this.busyWith();
  }

  private busyWith(): string | undefined {
    if (this.matches('capturing')) return 'capturing: a capture transaction is in flight';
    if (this.matches('canceling')) return 'canceling: a cancellation is being relayed';
    if (this.matches({ drafted: 'verifyingSignature' })) return 'drafted: a signature is being verified';
    if (this.matches({ stored: 'prechecking' })) return 'stored: a capture is being prechecked';
    if (this.matches({ stored: 'verifyingCancellation' })) return 'stored: a cancellation signature is being verified';
    return undefined;
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

  send(command: Command): void {
    const before = this.state;
    const event = { ...command, at: this.now() } as AuthorizationEvent;
    [this.snapshot] = transition(authorizationMachine, this.snapshot, event);
    const after = this.state;
    if (after !== before) {
      this.history.push({ state: after, at: event.at });
      upsertSearchAttributes([{ key: AuthorizationStateAttribute, value: after }]);
    }
    if ((command.type === 'DRAFTED' || command.type === 'PRESIGNED_CHECKED') && this.context.authorization) {
      const { validBefore, nonce } = this.context.authorization;
      upsertSearchAttributes([
        { key: ValidBeforeAttribute, value: new Date(Number(validBefore) * 1000) },
        { key: AuthorizationNonceAttribute, value: nonce.toLowerCase() },
      ]);
    }
  }

  describeState(): string {
    return this.busyWith() ?? this.state;
  }

  captureRequest(): CaptureRequest {
    const { authorization, signature, primaryType } = this.context;
    if (!authorization || !signature) throw new Error('no stored authorization to capture');
    return { primaryType, authorization, signature };
  }

  view(): AuthorizationView {
    const c = this.context;
    return {
      orderId: c.orderId,
      state: this.state,
      primaryType: c.primaryType,
      amount: formatAmount(BigInt(c.value)),
      authorization: c.authorization,
      domain: c.domain,
      typedData: c.domain && c.authorization && this.state === 'drafted'
        ? authorizationTypedData(c.domain, c.primaryType, c.authorization)
        : null,
      // Offered while a payer cancellation can be accepted: the authorization is stored and unused.
      cancellationTypedData: c.domain && c.authorization && this.state === 'stored'
        ? cancelAuthorizationTypedData(c.domain, { authorizer: c.authorization.from, nonce: c.authorization.nonce })
        : null,
      capture: c.capture,
      cancellation: c.cancellation,
      void: c.void,
      lastError: c.lastError,
      history: [...this.history],
    };
  }
}
