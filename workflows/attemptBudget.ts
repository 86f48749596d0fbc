// How many failed attempts of a command one authorization takes in. A failed attempt that needed
// the chain (a contract wallet's signature, a capture precheck) leaves its activity in history; the
// budget keeps anyone, a checkout-link holder or a merchant's retry loop, from growing one
// authorization's history and cost without bound. Pure: the workflow keeps it in its persisted state
// and its update validators ask it before an attempt is accepted.
import { ApplicationFailure } from '@temporalio/workflow';

/**
 * `signature` and `cancel` count signatures nobody checked before sending (anyone's); the `checked…`
 * kinds count those an authenticated caller had the chain accept first (a contract wallet's), which
 * only the wallet itself can make fail later: a stranger can never spend those.
 */
export type AttemptKind = 'signature' | 'cancel' | 'capture' | 'checkedSignature' | 'checkedCancel';

/** Failures each command may have before attempts are spaced by the cool-down. */
export const FREE_FAILURES = 5;
/** After the free failures, one more attempt per this many seconds. */
export const COOL_DOWN_SECONDS = 60;

export interface AttemptRecord {
  failures: number;
  /** Workflow time (ms since epoch) of the last failure. */
  lastFailureAt: number;
}

export type AttemptBudgetState = Partial<Record<AttemptKind, AttemptRecord>>;

/** Seconds until another attempt of `kind` may be accepted; 0 when it may be now. */
export function secondsUntilAllowed(state: AttemptBudgetState, kind: AttemptKind, now: number): number {
  const record = state[kind];
  if (!record || record.failures < FREE_FAILURES) return 0;
  const waitMs = record.lastFailureAt + COOL_DOWN_SECONDS * 1000 - now;
  return waitMs > 0 ? Math.ceil(waitMs / 1000) : 0;
}

export function recordFailure(state: AttemptBudgetState, kind: AttemptKind, now: number): AttemptBudgetState {
  const failures = (state[kind]?.failures ?? 0) + 1;
  return { ...state, [kind]: { failures, lastFailureAt: now } };
}

const actions: Record<AttemptKind, string> = {
  signature: 'signatures',
  cancel: 'cancellation signatures',
  capture: 'captures',
  checkedSignature: 'signatures its wallet had vouched for',
  checkedCancel: 'cancellations its wallet had vouched for',
};

/** The budget an attempt counts against: a signature the chain vouched for before it was sent has its own. */
export function signatureAttemptKind(kind: 'signature' | 'cancel', request: unknown): AttemptKind {
  if ((request as { checkedOnchain?: unknown } | undefined)?.checkedOnchain !== true) return kind;
  return kind === 'signature' ? 'checkedSignature' : 'checkedCancel';
}

/** For update validators: refuses (429, Retry-After) while the budget is spent. Nothing enters history. */
export function assertWithinBudget(state: AttemptBudgetState, kind: AttemptKind, now: number): void {
  const wait = secondsUntilAllowed(state, kind, now);
  if (wait === 0) return;
  throw ApplicationFailure.create({
    type: 'too_many_attempts',
    nonRetryable: true,
    message: `this authorization refused ${state[kind]!.failures} ${actions[kind]}; try again in ${wait} s`,
    details: [{ retryAfterSeconds: wait }],
  });
}
