// The events an order service hears about one authorization (docs/webhooks.md#events): each transition
// that matters becomes an event, numbered in the workflow's own state so a replay names it the same
// way, and kept in the workflow's memo with the next write of the view (workflows/memoEventLog.ts).
// Which transitions those are is decided by workflows/events.ts.
import { workflowInfo } from '@temporalio/workflow';
import type { AuthorizationView } from '../domain/authorization.js';
import { eventId, type AuthcapEvent, type EventType } from '../domain/events.js';
import { eventTypesFor, stageOf } from './events.js';
import type { AuthorizationContext, AuthorizationEvent } from './machine.js';
import { MemoEventLog, type MemoEventLogState } from './memoEventLog.js';

/** The memo entries and search attributes that record the events since the last write. */
export type RecordedEvents = ReturnType<MemoEventLog['record']>;

/** What continue-as-new carries: the events themselves are in the memo, which the next run starts with. */
export interface AuthorizationEventsState {
  /** Events emitted so far. */
  eventSequence: number;
  eventLog: MemoEventLogState;
}

/** One transition, as the events see it: the machine's value and context on both sides, and the event. */
export interface Transition {
  from: unknown;
  to: unknown;
  event: AuthorizationEvent;
  before: AuthorizationContext;
  after: AuthorizationContext;
  /** The authorization as it stands after the transition (built only when the transition is an event). */
  view: () => AuthorizationView;
}

export class AuthorizationEvents {
  private sequence: number;
  private readonly log: MemoEventLog;
  /** Recorded since the memo was last written: they go with the next write. */
  private readonly pending: AuthcapEvent[] = [];

  constructor(carried?: AuthorizationEventsState) {
    this.sequence = carried?.eventSequence ?? 0;
    this.log = new MemoEventLog(carried?.eventLog);
  }

  record({ from, to, event, before, after, view }: Transition): void {
    // A partial capture's release is a refund: it is announced when it starts and when it succeeds,
    // before the capture it completes.
    const release = after.release;
    const releaseEvents: EventType[] =
      event.type === 'RELEASE_UPDATED' && release
        ? [...(!before.release ? (['refund.created'] as const) : []), ...(release.stage === 'succeeded' ? (['refund.succeeded'] as const) : [])]
        : [];
    const parts = holdPartEvents(event, before, after);
    const types = [...releaseEvents, ...parts.map((p) => p.type), ...eventTypesFor(stageOf(from), stageOf(to), event.type)];
    if (types.length === 0) return;
    // The resource id is added by publicEvent when the event leaves Temporal (ids are built outside the sandbox).
    const object = { id: '', ...view() };
    for (const type of types) {
      this.sequence += 1;
      const id = eventId(workflowInfo().firstExecutionRunId, this.sequence);
      const data = type.startsWith('refund.')
        ? {
            object: release,
            authorization: {
              id: '',
              orderId: object.orderId,
              state: object.state,
              amount: object.amount,
              amountCaptured: object.amountCaptured,
              amountRefunded: object.amountRefunded,
            },
          }
        : {
            object,
            ...(type === 'authorization.capture_failed' && after.lastError ? { reason: after.lastError } : {}),
            ...parts.find((p) => p.type === type)?.data(object),
          };
      this.pending.push({ id, type, createdAt: event.at, orderId: after.orderId, data } as unknown as AuthcapEvent);
    }
  }

  /** The events recorded since the last call, as memo entries and search attributes (empty when none). */
  take(at: string): RecordedEvents {
    return this.log.record(this.pending.splice(0), at);
  }

  persisted(): AuthorizationEventsState {
    return { eventSequence: this.sequence, eventLog: this.log.state() };
  }
}

/**
 * A held payment's own events, beside the state's: each part that succeeded (or failed) is its own
 * event naming the part, and what went back to the payer is `authorization.released`.
 */
function holdPartEvents(event: AuthorizationEvent, before: AuthorizationContext, after: AuthorizationContext) {
  if (!after.hold || after.hold === before.hold) return [];
  const part = (sequence: number) => (object: AuthorizationView) => ({ capture: object.captures?.find((c) => c.id.endsWith(`_${sequence}`)) });
  if (event.type === 'PART_SUCCEEDED') return [{ type: 'authorization.capture_succeeded' as const, data: part(event.sequence) }];
  if (event.type === 'PART_FAILED') return [{ type: 'authorization.capture_failed' as const, data: part(event.sequence) }];
  if (event.type === 'HOLD_RELEASED' && after.hold.release && !before.hold?.release)
    return [{ type: 'authorization.released' as const, data: (object: AuthorizationView) => ({ release: object.hold?.release ?? undefined }) }];
  return [];
}
