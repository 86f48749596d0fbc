// Every webhook endpoint has its dispatcher workflow (workflows/webhookDispatch.ts). It is started when
// the endpoint is created, and every worker makes sure of it when it starts (a start that failed
// after the endpoint was created, a dispatcher an operator terminated): starting one that runs already
// changes nothing.
import type { Client } from '@temporalio/client';
import { WEBHOOK_DISPATCH_WORKFLOW_TYPE, webhookDispatchWorkflowId } from '../domain/webhookDispatch.js';

export async function ensureWebhookDispatcher(client: Client, taskQueue: string, endpointId: string): Promise<void> {
  await client.workflow.start(WEBHOOK_DISPATCH_WORKFLOW_TYPE, {
    workflowId: webhookDispatchWorkflowId(endpointId),
    taskQueue,
    args: [{ endpointId }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}
