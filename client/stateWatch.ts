// Waiting for an authorization's state to change, so callers need not poll (GET …?wait=). A capture
// or a cancellation in flight ends the workflow when it settles: Temporal's own long poll on the
// run's close event wakes the wait with no workflow task and no repeated reads. Any other change (a
// capture that failed back to stored, a payer's signature) is seen by reading the memo at a modest
// pace, one read per waiting request, never more often than a polling caller would.
import type { AuthorizationResource } from '../domain/authorization.js';
import { finalStates } from '../domain/authorization.js';

/** Longest wait a request may ask for: under common proxy and load-balancer idle timeouts. */
export const MAX_WAIT_SECONDS = 30;
/** How often a waiting request re-reads the memo (the long poll covers the common case). */
const READ_EVERY_MS = 500;
/** With a close long poll running beside it, the memo is read less often. */
const READ_EVERY_WITH_CLOSE_MS = 1_000;
/** States whose next step is final, so the run closes: worth Temporal's close long poll. */
const CLOSING_STATES = new Set(['capturing', 'canceling']);

export interface StateWatchDeps {
  read(id: string): Promise<AuthorizationResource>;
  /** Resolves when the attempt's current run closes, or after `ms` (whichever first); never rejects. */
  awaitClose(id: string, ms: number): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The resource as soon as its state differs from `knownState` (default: its state now), or as it
 * stands once `waitSeconds` have passed. A final state answers at once: it will not change.
 */
export async function waitForStateChange(deps: StateWatchDeps, id: string, waitSeconds: number, knownState?: string): Promise<AuthorizationResource> {
  const deadline = Date.now() + Math.min(waitSeconds, MAX_WAIT_SECONDS) * 1000;
  let current = await deps.read(id);
  const known = knownState ?? current.state;
  const settled = () => current.state !== known || (finalStates as readonly string[]).includes(current.state);
  let closing: Promise<void> | undefined;
  let closed = false;
  while (!settled()) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    if (CLOSING_STATES.has(current.state) && !closed) {
      closing ??= deps.awaitClose(id, left).then(() => {
        closed = true;
      });
      await Promise.race([closing, sleep(Math.min(left, READ_EVERY_WITH_CLOSE_MS))]);
    } else {
      await sleep(Math.min(left, READ_EVERY_MS));
    }
    current = await deps.read(id);
  }
  return current;
}
