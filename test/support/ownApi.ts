// An API server of a test file's own, on the suite's Temporal and chain: for what the shared stack's
// API cannot show (its own metrics registry, its own settings), with a fresh key store and state dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeyStore } from '../../client/apiKeys.js';
import { AuthcapClient } from '../../client/authcapClient.js';
import { createApiServer, listen, type ApiOptions } from '../../api/server.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { webhookAddressPolicyFromEnv } from '../../runtime/webhookAddressPolicy.js';
import { dev } from './api.js';

export interface OwnApi {
  url: string;
  /** An order-service key of this API's own key store. */
  key: string;
  client: AuthcapClient;
  close(): Promise<void>;
}

/** @param taskQueue the workers this API sends to (default the suite's): an isolated chain's own, say. */
export async function startOwnApi(
  label: string,
  options: Partial<Omit<ApiOptions, 'client' | 'keys' | 'idempotency'>> = {},
  taskQueue?: string,
): Promise<OwnApi> {
  const dir = mkdtempSync(join(tmpdir(), `authcap-${label}-`));
  const keys = ApiKeyStore.open(join(dir, 'keys.json'));
  const key = keys.create('order-service', label).key;
  const settings = loadTemporalSettings({ address: dev().temporalAddress, namespace: dev().temporalNamespace });
  // Signatures are checked against the API's chain, as the API process does (an isolated chain names its own).
  const rpcUrl = options.rpcUrl ?? (taskQueue ? undefined : dev().rpcUrl);
  // The webhook address policy as api/main.ts reads it at its start: from this process's environment
  // (the dev stack allows loopback receivers; webhookSsrf.test.ts removes that before it starts its API).
  const client = await AuthcapClient.connect(taskQueue ? { ...settings, taskQueue } : settings, {
    rpcUrl,
    webhookAddressPolicy: webhookAddressPolicyFromEnv(process.env),
  });
  const server = createApiServer({ client, keys, idempotency: { dir: join(dir, 'idem') }, ...options });
  const url = await listen(server, 0);
  return {
    url,
    key,
    client,
    async close() {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
