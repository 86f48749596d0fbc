import { describe, expect, it } from 'vitest';
import { chainConfigOf } from '../../../worker/config.js';
import { readSettings } from '../../../runtime/settings/read.js';
import { deploymentVersionOf } from '../../../runtime/workerDeployment.js';

const base = { MERCHANT_PRIVATE_KEY: `0x${'22'.repeat(32)}` };
const network = {
  rpcUrls: ['http://127.0.0.1:1'],
  tokens: [`0x${'11'.repeat(20)}`],
  merchantPrivateKeys: [base.MERCHANT_PRIVATE_KEY as `0x${string}`],
  confirmations: 1,
};
const chainConfigFromEnv = (env: Record<string, string>) => chainConfigOf(network, readSettings('worker', env));

describe('worker settings', () => {
  it('periodic re-reads are off by default, on at 15 s when the watcher is off, and settable', () => {
    expect(chainConfigFromEnv({ ...base }).reconcileIntervalSeconds).toBe(0);
    expect(chainConfigFromEnv({ ...base, AUTHCAP_WATCH: '0' }).reconcileIntervalSeconds).toBe(15);
    expect(chainConfigFromEnv({ ...base, AUTHCAP_RECONCILE_SECONDS: '30' }).reconcileIntervalSeconds).toBe(30);
    expect(chainConfigFromEnv({ ...base, AUTHCAP_WATCH: '0', AUTHCAP_RECONCILE_SECONDS: 'off' }).reconcileIntervalSeconds).toBe(0);
    expect(() => chainConfigFromEnv({ ...base, AUTHCAP_RECONCILE_SECONDS: 'soon' })).toThrow(/AUTHCAP_RECONCILE_SECONDS/);
  });

  it('bounds the workflow cache', () => {
    const workflowCacheSize = (env: Record<string, string>) => readSettings('worker', { ...base, ...env }).AUTHCAP_WORKFLOW_CACHE_SIZE;
    expect(workflowCacheSize({})).toBe(250);
    expect(workflowCacheSize({ AUTHCAP_WORKFLOW_CACHE_SIZE: '40' })).toBe(40);
    expect(() => workflowCacheSize({ AUTHCAP_WORKFLOW_CACHE_SIZE: '-1' })).toThrow(/AUTHCAP_WORKFLOW_CACHE_SIZE/);
  });

  it('worker versioning is off unless AUTHCAP_BUILD_ID is set; the deployment is the task queue unless named', () => {
    const version = (env: Record<string, string>) => deploymentVersionOf(readSettings('worker', { ...base, ...env }), env.AUTHCAP_TASK_QUEUE ?? 'authcap');
    expect(version({})).toBeUndefined();
    expect(version({ AUTHCAP_DEPLOYMENT_NAME: 'payments' })).toBeUndefined();
    expect(version({ AUTHCAP_BUILD_ID: 'v42' })).toEqual({ deploymentName: 'authcap', buildId: 'v42' });
    expect(version({ AUTHCAP_BUILD_ID: 'v42', AUTHCAP_DEPLOYMENT_NAME: 'payments' })).toEqual({ deploymentName: 'payments', buildId: 'v42' });
    // Temporal joins name and build id with "." or ":": a name holding one is refused before Temporal does.
    expect(() => version({ AUTHCAP_BUILD_ID: 'v42', AUTHCAP_DEPLOYMENT_NAME: 'pay.ments' })).toThrow(
      /AUTHCAP_DEPLOYMENT_NAME must be at most 255 characters without/,
    );
    expect(() => version({ AUTHCAP_BUILD_ID: 'v42', AUTHCAP_TASK_QUEUE: 'authcap:eu' })).toThrow(/set AUTHCAP_DEPLOYMENT_NAME/);
    expect(() => version({ AUTHCAP_BUILD_ID: 'v 42' })).toThrow(/AUTHCAP_BUILD_ID must be at most 255 characters without spaces/);
  });
});
