// API keys: the key file's keys by role, and AUTHCAP_API_KEY (one order-service key handed out as a
// secret variable) beside them; a revoked or unknown key is nobody.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../../client/apiKeys.js';

const fileIn = () => join(mkdtempSync(join(tmpdir(), 'authcap-keys-')), 'keys.json');

describe('ApiKeyStore', () => {
  it("authenticates the file's keys by role until revoked", () => {
    const store = ApiKeyStore.open(fileIn());
    const operator = store.create('operator', 'ops');
    expect(store.authenticate(operator.key)).toEqual({ id: operator.record.id, role: 'operator' });
    expect(store.revoke(operator.record.id)).toBe(true);
    expect(store.authenticate(operator.key)).toBeUndefined();
    expect(store.authenticate('ak_nobody')).toBeUndefined();
    expect(store.authenticate(undefined)).toBeUndefined();
  });

  it('takes AUTHCAP_API_KEY as an order-service key beside the file, and only that exact key', () => {
    const store = ApiKeyStore.open(fileIn(), { apiKey: 'secret-variable-key' });
    expect(store.authenticate('secret-variable-key')).toEqual({ id: 'env', role: 'order-service' });
    expect(store.authenticate('secret-variable-ke')).toBeUndefined();
    expect(ApiKeyStore.open(fileIn()).authenticate('secret-variable-key')).toBeUndefined();
  });
});
