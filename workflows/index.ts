// The worker bundles this file: every workflow it exports is registered.
export { authorizationWorkflow } from './authorization.js';
export { merchantRelayerWorkflow } from './relayer.js';
export { nonceClaimWorkflow } from './nonceClaim.js';
export { authorizationEventsWorkflow } from './eventStream.js';
export { webhookEndpointsWorkflow } from './webhookEndpoints.js';
