// Resource ids live in domain/ (the worker's event publisher names resources too); callers keep this path.
export { parseResourceId, resourceId, workflowIdForOrder } from '../domain/ids.js';
