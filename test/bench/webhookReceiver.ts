// A merchant's webhook receiver, as small as one can be: node:http on 127.0.0.1, a free port, 200 to
// every POST. It counts deliveries and distinct event ids (the Authcap-Event-Id header, else the
// body's `id`) and checks nothing else: signatures, order and contents are the tests' business. The
// bench registers it once, through the API, so the rows run with webhooks on, as merchants run them.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { freePort } from '../../devstack/process.js';
import { EVENT_ID_HEADER } from '../../runtime/webhookSignature.js';
import type { AuthcapApi } from './authcapFlows.js';

export interface WebhookFigures {
  /** The endpoint as registered (POST /v1/webhook_endpoints, every event type). */
  endpointId: string;
  url: string;
  /** POSTs received (every one answered 200). */
  deliveries: number;
  /** Distinct event ids among them (a redelivery under the same id counts once). */
  distinctEventIds: number;
}

export interface WebhookReceiver {
  readonly url: string;
  deliveries(): number;
  distinctEventIds(): number;
  /** Waits until nothing new has arrived for `quietMs` (at most `maxMs`): deliveries trail the work by a scan or two. */
  settle(quietMs?: number, maxMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const port = await freePort();
  const ids = new Set<string>();
  let deliveries = 0;
  let lastAt = Date.now();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => {
      deliveries += 1;
      lastAt = Date.now();
      const id = idOf(req.headers[EVENT_ID_HEADER], Buffer.concat(chunks).toString('utf8'));
      if (id) ids.add(id);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries: () => deliveries,
    distinctEventIds: () => ids.size,
    async settle(quietMs = 3_000, maxMs = 30_000) {
      const until = Date.now() + maxMs;
      while (Date.now() < until && Date.now() - lastAt < quietMs) await new Promise((r) => setTimeout(r, 250));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function idOf(header: string | string[] | undefined, body: string): string | undefined {
  const fromHeader = Array.isArray(header) ? header[0] : header;
  if (fromHeader) return fromHeader;
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Registers the receiver as the merchant's one webhook endpoint, for every event type. */
export async function registerReceiver(api: AuthcapApi, receiver: WebhookReceiver): Promise<{ endpointId: string; url: string }> {
  const endpoint = await api.registerWebhookEndpoint(receiver.url, ['*']);
  return { endpointId: endpoint.id, url: receiver.url };
}

export function webhookFigures(registered: { endpointId: string; url: string }, receiver: WebhookReceiver): WebhookFigures {
  return { ...registered, deliveries: receiver.deliveries(), distinctEventIds: receiver.distinctEventIds() };
}
