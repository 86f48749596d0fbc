// Resource ids. The workflow id is derived from the order so Temporal itself guarantees one open
// authorization per order; the run id tells one attempt from the next. The resource id carries both.

const PREFIX = 'auth_';

export function workflowIdForOrder(orderId: string): string {
  return `authorization-${orderId}`;
}

export function resourceId(orderId: string, runId: string): string {
  return `${PREFIX}${Buffer.from(orderId, 'utf8').toString('base64url')}.${runId}`;
}

/** The order and run an id names, or undefined when it is not one of ours (the API answers 404). */
export function parseResourceId(id: string): { orderId: string; workflowId: string; runId: string } | undefined {
  if (!id.startsWith(PREFIX)) return undefined;
  const body = id.slice(PREFIX.length);
  const dot = body.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const orderId = Buffer.from(body.slice(0, dot), 'base64url').toString('utf8');
  // Run ids are lower-case UUIDs; Temporal also finds a run named in upper case, so the id is read
  // in its one canonical spelling (nothing keyed by it may exist twice under two spellings).
  const runId = body.slice(dot + 1).toLowerCase();
  if (!orderId || !/^[0-9a-f-]{36}$/.test(runId)) return undefined;
  return { orderId, workflowId: workflowIdForOrder(orderId), runId };
}
