// `AUTHCAP_WEBHOOK_URL=http://127.0.0.1:4000/hooks npm start` registers that URL for every event
// type, once: the endpoint and its signing secret are kept in the state dir (0600) and reused on the
// next start while the endpoint still exists with that URL.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AuthcapClient } from '../client/authcapClient.js';

export interface DevWebhook {
  id: string;
  url: string;
  secret: string;
}

export async function ensureDevWebhook(client: AuthcapClient, stateDir: string, url: string): Promise<DevWebhook> {
  const file = join(stateDir, 'webhook.json');
  const kept = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DevWebhook) : undefined;
  const registered = await client.webhookEndpoints.list();
  if (kept && registered.some((e) => e.id === kept.id && e.url === new URL(url).toString())) return kept;
  const created = await client.webhookEndpoints.create({ url, events: ['*'], description: 'npm start (AUTHCAP_WEBHOOK_URL)' });
  const webhook = { id: created.id, url: created.url, secret: created.secret };
  writeFileSync(file, `${JSON.stringify(webhook, null, 2)}\n`, { mode: 0o600 });
  return webhook;
}
