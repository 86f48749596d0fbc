// What a Temporal client sends when it does not hold the payload keys: plain JSON payloads, as the
// outside probe did. And an operator's input, sealed by the codec server's /encode the way the
// Temporal UI and the `temporal` CLI do it. Both are sent as raw payloads, past any data converter.
import type { Client } from '@temporalio/client';
import proto, { type temporal } from '@temporalio/proto';
import { dev } from './api.js';

type Payload = temporal.api.common.v1.IPayload;

export function plainPayload(value: unknown): Payload {
  return { metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode(JSON.stringify(value)) };
}

/** Sealed by the stack's codec server (its /encode, with its token): what the UI sends for an operator. */
export async function operatorSealed(value: unknown): Promise<Payload> {
  const wire = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from(JSON.stringify(value)).toString('base64') };
  const res = await fetch(`${dev().codecUrl}/encode`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ payloads: [wire] }),
  });
  if (res.status !== 200) throw new Error(`codec server /encode answered ${res.status}`);
  const [sealed] = ((await res.json()) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads;
  return {
    metadata: Object.fromEntries(Object.entries(sealed!.metadata).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))])),
    data: new Uint8Array(Buffer.from(sealed!.data, 'base64')),
  };
}

export async function sendRawSignal(client: Client, workflowId: string, signalName: string, payload: Payload): Promise<void> {
  await client.workflowService.signalWorkflowExecution({
    namespace: client.options.namespace,
    workflowExecution: { workflowId },
    signalName,
    input: { payloads: [payload] },
    identity: 'forged-inputs-test',
  });
}

/** The history's event types by name (EVENT_TYPE_…), in order: what a refused command must not add to. */
export async function historyEventTypes(client: Client, workflowId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).map((e) => proto.temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType));
}

/** How many updates a history accepted. */
export const acceptedUpdates = (types: string[]) => types.filter((t) => t === 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED').length;
