// A workflow's events kept in its own memo, each under a key of its own (written once, when the event
// is recorded), with search attributes that let the events feed and the webhook dispatchers find the
// workflows whose events moved (workers/webhookDispatch). The events leave with the workflow task
// that records them: no workflow per authorization to hand them to, no signal, no reply that wakes
// the workflow again. Used by the authorization and refunds workflows.
import { workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { eventMemoKey, parseEventId, type AuthcapEvent, type EventType, type RecordedEvent } from '../domain/events.js';
import { EventTypesAttribute, EventsKeyAttribute, EventsStartedAtAttribute, EventsUpdatedAtAttribute } from '../domain/searchAttributes.js';

/** What a run hands to the next one (continue-as-new): the memo itself carries the events. */
export interface MemoEventLogState {
  types: EventType[];
  startedAt: string | null;
}

export class MemoEventLog {
  private readonly types: Set<EventType>;
  private startedAt: string | null;

  constructor(carried?: MemoEventLogState) {
    this.types = new Set(carried?.types ?? []);
    this.startedAt = carried?.startedAt ?? null;
  }

  /** The memo entries and search attributes that record `events` (empty when there are none). */
  record(events: readonly AuthcapEvent[], at: string): { memo: Record<string, RecordedEvent>; searchAttributes: SearchAttributeUpdatePair[] } {
    if (events.length === 0) return { memo: {}, searchAttributes: [] };
    const first = this.startedAt === null;
    this.startedAt ??= at;
    for (const e of events) this.types.add(e.type);
    const memo = Object.fromEntries(
      events.map((e) => {
        const sequence = parseEventId(e.id)?.sequence ?? 0;
        return [eventMemoKey(sequence), { ...e, sequence, recordedAt: at } as RecordedEvent];
      }),
    );
    return {
      memo,
      searchAttributes: [
        { key: EventTypesAttribute, value: [...this.types] },
        { key: EventsUpdatedAtAttribute, value: new Date(at) },
        ...(first
          ? [
              { key: EventsStartedAtAttribute, value: new Date(at) },
              // The attempt's (or ledger's) name in event ids: the feed locates a cursor's event by it.
              { key: EventsKeyAttribute, value: workflowInfo().firstExecutionRunId },
            ]
          : []),
      ] as SearchAttributeUpdatePair[],
    };
  }

  state(): MemoEventLogState {
    return { types: [...this.types], startedAt: this.startedAt };
  }
}
