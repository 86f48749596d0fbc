import { describe, expect, it } from 'vitest';
import { chainConfigFromEnv } from '../../worker/config.js';
import { workflowCacheSize } from '../../worker/createWorker.js';

const base = { RPC_URL: 'http://127.0.0.1:1', TOKEN_ADDRESS: `0x${'11'.repeat(20)}`, MERCHANT_PRIVATE_KEY: `0x${'22'.repeat(32)}` };

describe('worker settings', () => {
  it('periodic re-reads are off by default, on at 15 s when the watcher is off, and settable', () => {
    expect(chainConfigFromEnv({ ...base }).reconcileIntervalSeconds).toBe(0);
    expect(chainConfigFromEnv({ ...base, AUTHCAP_WATCH: '0' }).reconcileIntervalSeconds).toBe(15);
    expect(chainConfigFromEnv({ ...base, AUTHCAP_RECONCILE_SECONDS: '30' }).reconcileIntervalSeconds).toBe(30);
    expect(chainConfigFromEnv({ ...base, AUTHCAP_WATCH: '0', AUTHCAP_RECONCILE_SECONDS: 'off' }).reconcileIntervalSeconds).toBe(0);
    expect(() => chainConfigFromEnv({ ...base, AUTHCAP_RECONCILE_SECONDS: 'soon' })).toThrow(/AUTHCAP_RECONCILE_SECONDS/);
  });

  it('bounds the workflow cache', () => {
    expect(workflowCacheSize({})).toBe(250);
    expect(workflowCacheSize({ AUTHCAP_WORKFLOW_CACHE_SIZE: '40' })).toBe(40);
    expect(() => workflowCacheSize({ AUTHCAP_WORKFLOW_CACHE_SIZE: '-1' })).toThrow(/AUTHCAP_WORKFLOW_CACHE_SIZE/);
  });
});
