// What a watch (client/authorizations/watchHub.ts) learns from Temporal: its own long poll on the history of the
// attempt's current run (GetWorkflowExecutionHistory with waitNewEvent). The server holds the call
// until a new event is written, so an authorization where nothing happens costs one open call and no
// reads; when events arrive, the memo is worth reading again only if one of them could have changed
// it. Continue-as-new closes a run and starts the next one of the same attempt: the watch follows it.
// Any other close, or a later attempt of the same order in the workflow id's place, means this
// attempt will never change again.
import type { Client } from '@temporalio/client';
import type { temporal as proto } from '@temporalio/proto';
import { AuthcapError } from '../../domain/errors.js';
import { parseResourceId } from '../../domain/ids.js';
import { withDeadline } from './deadlines.js';

/** What one answer of the history long poll tells a watch: read the record again, or nothing new. */
export type RecordChange = 'changed' | 'quiet';

/**
 * How long one long poll may stay open. The server answers a poll with nothing new shortly before its
 * deadline (at most its own 20 s), so this only bounds how long a lost connection goes unnoticed.
 */
const LONG_POLL_MS = 20_000;

// Event types (the proto package is CommonJS: no named ESM enums).
const WORKFLOW_EXECUTION_STARTED = 1;
const WORKFLOW_EXECUTION_CONTINUED_AS_NEW = 28;
/** A run's close: completed, failed, timed out, canceled, terminated, continued as new. */
const CLOSE_EVENTS = new Set([2, 3, 4, 21, 27, WORKFLOW_EXECUTION_CONTINUED_AS_NEW]);
/** The events after which the memo may differ: it is written by upsertMemo (46; 44 from outside), and a close ends it. */
const RECORD_EVENTS = new Set([...CLOSE_EVENTS, 44, 46]);

type HistoryEvent = proto.api.history.v1.IHistoryEvent;

/**
 * The changes of the attempt `id` names, as Temporal's long poll delivers them: one call open at a
 * time, each resuming where the previous answer ended (its page token), so no event is missed between
 * two calls and none is read twice.
 */
export async function* historyChanges(temporal: Client, id: string, signal: AbortSignal): AsyncGenerator<RecordChange> {
  const attempt = parseResourceId(id);
  if (!attempt) throw new AuthcapError('not_found', `no authorization with id ${id}`);
  let pageToken: Uint8Array | undefined;
  // The first answer on a run holds its whole history so far, some of it perhaps newer than the last read.
  let newRun = true;
  while (!signal.aborted) {
    const answer = await untilAborted(signal, (callSignal) =>
      withDeadline(temporal, LONG_POLL_MS, () =>
        temporal.connection.withAbortSignal(callSignal, () =>
          temporal.workflowService.getWorkflowExecutionHistory({
            namespace: temporal.options.namespace,
            // No run id: the workflow id's current run, which continue-as-new moves on; the page token then pins it.
            execution: { workflowId: attempt.workflowId },
            nextPageToken: pageToken,
            waitNewEvent: true,
            skipArchival: true,
          }),
        ),
      ),
    );
    const events = answer.history?.events ?? [];
    if (newRun && startedByAnotherAttempt(events, attempt.runId)) return;
    yield newRun || events.some((event) => RECORD_EVENTS.has(Number(event.eventType))) ? 'changed' : 'quiet';
    const wasNewRun = newRun;
    newRun = false;
    if (answer.nextPageToken && answer.nextPageToken.length > 0) {
      pageToken = answer.nextPageToken;
      continue;
    }
    // No token: the run has closed, and this answer ends with its close event.
    const lastType = Number(events.at(-1)?.eventType);
    // Closed for good (anything but continue-as-new), or nothing to learn from a fresh start either.
    if ((CLOSE_EVENTS.has(lastType) && lastType !== WORKFLOW_EXECUTION_CONTINUED_AS_NEW) || (wasNewRun && !CLOSE_EVENTS.has(lastType))) return;
    // Continued as new (or closed with its close event on no page read here): start on the current run.
    pageToken = undefined;
    newRun = true;
  }
}

/** The workflow id's current run belongs to a later attempt of the order: this one closed for good. */
function startedByAnotherAttempt(events: HistoryEvent[], firstRunId: string): boolean {
  const first = events[0];
  if (!first || Number(first.eventType) !== WORKFLOW_EXECUTION_STARTED) return false;
  const started = first.workflowExecutionStartedEventAttributes?.firstExecutionRunId;
  return Boolean(started) && started!.toLowerCase() !== firstRunId;
}

/**
 * One call under a signal of its own that follows the watch's: the SDK never removes the listener it
 * adds to a call's signal, and a watch makes a call every 20 s for as long as anyone waits.
 */
async function untilAborted<T>(signal: AbortSignal, call: (callSignal: AbortSignal) => Promise<T>): Promise<T> {
  const callController = new AbortController();
  const abort = () => callController.abort();
  signal.addEventListener('abort', abort, { once: true });
  try {
    return await call(callController.signal);
  } finally {
    signal.removeEventListener('abort', abort);
  }
}
