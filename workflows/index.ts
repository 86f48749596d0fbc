// The worker bundles this file: every workflow it exports is registered. Each type's code is
// evaluated when a workflow of that type starts (webpack "eager" imports: one bundle, nothing is
// fetched). The sandbox evaluates a separate copy of every module for every workflow it runs, so a
// nonce claim or a webhook dispatcher that imported the authorization's code would evaluate XState, the
// machine and viem too, for nothing. Handlers set a few microtasks later are still set within the
// workflow's first activation, where Temporal holds early updates and signals for them.
import type * as Authorization from './authorization.js';
import type * as Relayer from './relayer.js';
import type * as NonceClaim from './nonceClaim.js';
import type * as WebhookEndpoints from './webhookEndpoints.js';
import type * as Refunds from './refunds.js';
import type * as WebhookDispatch from './webhookDispatch.js';
import type * as ChainWatcher from './chainWatcher.js';

type Fn<T> = T extends (...args: infer A) => infer R ? (...args: A) => R : never;

export const authorizationWorkflow: Fn<typeof Authorization.authorizationWorkflow> = async function authorizationWorkflow(...args) {
  return (await import(/* webpackMode: "eager" */ './authorization.js')).authorizationWorkflow(...args);
};

export const merchantRelayerWorkflow: Fn<typeof Relayer.merchantRelayerWorkflow> = async function merchantRelayerWorkflow(...args) {
  return (await import(/* webpackMode: "eager" */ './relayer.js')).merchantRelayerWorkflow(...args);
};

export const nonceClaimWorkflow: Fn<typeof NonceClaim.nonceClaimWorkflow> = async function nonceClaimWorkflow(...args) {
  return (await import(/* webpackMode: "eager" */ './nonceClaim.js')).nonceClaimWorkflow(...args);
};

export const webhookEndpointsWorkflow: Fn<typeof WebhookEndpoints.webhookEndpointsWorkflow> = async function webhookEndpointsWorkflow(...args) {
  return (await import(/* webpackMode: "eager" */ './webhookEndpoints.js')).webhookEndpointsWorkflow(...args);
};

export const refundsWorkflow: Fn<typeof Refunds.refundsWorkflow> = async function refundsWorkflow(...args) {
  return (await import(/* webpackMode: "eager" */ './refunds.js')).refundsWorkflow(...args);
};

export const webhookDispatchWorkflow: Fn<typeof WebhookDispatch.webhookDispatchWorkflow> = async function webhookDispatchWorkflow(...args) {
  return (await import(/* webpackMode: "eager" */ './webhookDispatch.js')).webhookDispatchWorkflow(...args);
};

export const chainWatcherWorkflow: Fn<typeof ChainWatcher.chainWatcherWorkflow> = async function chainWatcherWorkflow(...args) {
  return (await import(/* webpackMode: "eager" */ './chainWatcher.js')).chainWatcherWorkflow(...args);
};
