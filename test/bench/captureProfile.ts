// Where a capture's time goes, read from the authorization workflow's own history: each step from
// the capture update's acceptance to its completion, by the server's event timestamps. Averaged
// over the sampled captures (ms).
import type { temporal } from '@temporalio/proto';
import proto from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = proto.temporal.api.enums.v1.EventType;

const ms = (e: HistoryEvent) => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);

/** Step name → duration for one capture: activities by type, the relayer's answer, task overhead. */
export function captureSteps(events: HistoryEvent[]): Record<string, number> | undefined {
  const accepted = events.findIndex(
    (e) =>
      e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED &&
      e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'capture',
  );
  if (accepted < 0) return undefined;
  const steps: Record<string, number> = {};
  const add = (name: string, d: number) => (steps[name] = (steps[name] ?? 0) + d);
  const scheduled = new Map<number, { type: string; at: number }>();
  let last = ms(events[accepted]!);
  const start = last;
  for (const e of events.slice(accepted + 1)) {
    const at = ms(e);
    switch (e.eventType) {
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        add('workflow task before the step', at - last);
        scheduled.set(Number(e.eventId), { type: e.activityTaskScheduledEventAttributes?.activityType?.name ?? '?', at });
        last = at;
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const s = scheduled.get(Number(e.activityTaskCompletedEventAttributes?.scheduledEventId));
        if (s) add(`activity ${s.type}`, at - s.at);
        last = at;
        break;
      }
      case EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
        add('workflow task before the step', at - last);
        last = at;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        add('relayer: request → signed and sent → answer', at - last);
        last = at;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
        add('workflow task before the step', at - last);
        steps.total = at - start;
        return steps;
      default:
        break;
    }
  }
  return undefined;
}

export function averageSteps(all: Record<string, number>[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const steps of all) for (const [k, v] of Object.entries(steps)) sums[k] = (sums[k] ?? 0) + v;
  return Object.fromEntries(
    Object.entries(sums)
      .map(([k, v]) => [k, Math.round(v / Math.max(1, all.length))])
      .sort(([a], [b]) => (a === 'total' ? 1 : b === 'total' ? -1 : 0)),
  );
}
