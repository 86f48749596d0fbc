// A plain Temporal client on the test stack's server: what an operator (or the Temporal UI) sees.
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { dev } from './api.js';

export async function connectTemporal(): Promise<Client> {
  const connection = await Connection.connect({ address: dev().temporalAddress });
  return new Client({ connection, namespace: dev().temporalNamespace });
}

/** Whether Temporal has any workflow execution with this id (running or closed). */
export async function workflowExists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
