// Temporal round trips one capture costs: workflow tasks, activities and history events of the
// authorization's workflow (the relayer's share is counted apart), read from the recorded history.
import { Client } from '@temporalio/client';
import { connectTemporal } from './temporalConnection.js';
import proto from '@temporalio/proto';
import { parseResourceId } from '../../domain/ids.js';
import { averageSteps, captureSteps } from './captureProfile.js';

const EventType = proto.temporal.api.enums.v1.EventType;

export interface TemporalCost {
  historyEvents: number;
  workflowTasks: number;
  activities: number;
  localActivities: number;
  signals: number;
  updates: number;
}

export async function temporalCostOf(
  address: string,
  namespace: string,
  resourceIds: string[],
): Promise<{ cost: TemporalCost; captureProfileMs: Record<string, number> }> {
  const connection = await connectTemporal(address);
  try {
    const client = new Client({ connection, namespace });
    const totals: TemporalCost = { historyEvents: 0, workflowTasks: 0, activities: 0, localActivities: 0, signals: 0, updates: 0 };
    const profiles: Record<string, number>[] = [];
    for (const id of resourceIds) {
      const parsed = parseResourceId(id)!;
      const history = await client.workflow.getHandle(parsed.workflowId, parsed.runId).fetchHistory();
      const steps = captureSteps(history.events ?? []);
      if (steps) profiles.push(steps);
      for (const event of history.events ?? []) {
        totals.historyEvents += 1;
        if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) totals.workflowTasks += 1;
        if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) totals.activities += 1;
        if (event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED) totals.localActivities += 1;
        if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) totals.signals += 1;
        if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) totals.updates += 1;
      }
    }
    const per = Math.max(1, resourceIds.length);
    const cost = Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, Math.round((v / per) * 10) / 10])) as unknown as TemporalCost;
    return { cost, captureProfileMs: averageSteps(profiles) };
  } finally {
    await connection.close();
  }
}
