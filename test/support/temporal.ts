// A plain Temporal client on the test stack's server: what an operator (or the Temporal UI) sees.
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { dev } from './api.js';
import { dataConverterFromEnv } from '../../runtime/temporal.js';

/** An operator's client: it holds the payload keys, as the CLI and the Temporal UI (through the codec server) do. */
export async function connectTemporal(): Promise<Client> {
  const d = dev();
  const connection = await Connection.connect({ address: d.temporalAddress });
  return new Client({ connection, namespace: d.temporalNamespace, dataConverter: dataConverterFromEnv() });
}

/** A client without the payload keys: what someone reading Temporal's history or database sees. */
export async function connectTemporalWithoutKeys(): Promise<Client> {
  const d = dev();
  const connection = await Connection.connect({ address: d.temporalAddress });
  return new Client({ connection, namespace: d.temporalNamespace });
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
