// Which transitions of the machine are a failed capture attempt, for the capture-failures metric
// (authcap_capture_failures_total, reported through the telemetry sink: no workflow command).
import type { SnapshotFrom } from 'xstate';
import type { AuthorizationEvent, authorizationMachine } from './machine.js';

type Snapshot = SnapshotFrom<typeof authorizationMachine>;

/** The events that end an attempt of ours without a capture: its precheck, its command, its transaction. */
const FAILING_EVENTS: ReadonlySet<AuthorizationEvent['type']> = new Set(['PRECHECKED', 'COMMAND_FAILED', 'CAPTURE_FAILED']);

/**
 * An attempt (one CAPTURE_REQUESTED) was under way, prechecking or capturing, and this event ended it
 * anywhere but `capturing`: refused by the precheck (back to stored, or expired past the deadline),
 * its command failed for good, or its transaction failed or expired. The machine leaves those states
 * on the first such event and only a new CAPTURE_REQUESTED enters them again, so an attempt counts
 * once, however often Temporal retried its activities before. Not failures of ours: a partial
 * capture's release (the money moved; it retries until it succeeds), and a nonce consumed onchain
 * or a void ending the attempt (the transitions counter shows those).
 */
export function isFailedCaptureAttempt(before: Snapshot, after: Snapshot, event: AuthorizationEvent['type']): boolean {
  if (!FAILING_EVENTS.has(event)) return false;
  const attempting = before.matches({ stored: 'prechecking' }) || (before.matches('capturing') && !before.matches({ capturing: 'releasing' }));
  return attempting && !after.matches('capturing');
}
