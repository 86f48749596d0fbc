// A small webhook receiver: authcap POSTs each event, signed with the endpoint's secret
// (`authcap-signature: t=<unix seconds>,v1=<HMAC-SHA256 of "<t>.<raw body>">`). Everything is
// checked before the event is believed: a missing or malformed header, a signature that does not
// match the raw body, or a timestamp more than 5 minutes off is answered 400 and recorded nowhere.
// Events are de-duplicated by id (a delivery retried after a lost answer carries the same id).
//
//   AUTHCAP_WEBHOOK_SECRET=whsec_… PORT=4000 npx tsx examples/webhook-receiver.ts
//
// It needs no Temporal connection: 'authcap/webhooks' is the verification alone.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { AuthcapEvent } from 'authcap';
import { DEFAULT_TOLERANCE_SECONDS, SIGNATURE_HEADER, verifyWebhook, WebhookVerificationError } from 'authcap/webhooks';

/** A webhook body is one event: far below this. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface ReceiverOptions {
  /** The endpoint's signing secret (`whsec_…`), shown once when it was registered. */
  secret: string;
  port?: number;
  host?: string;
  toleranceSeconds?: number;
  /** What the order service does with a verified event, once per event id. A throw answers 500: authcap retries. */
  onEvent?: (event: AuthcapEvent) => void | Promise<void>;
}

export interface WebhookReceiver {
  url: string;
  /** Verified events, once each, in arrival order. */
  events: AuthcapEvent[];
  /** Refused deliveries: why (WebhookVerificationError codes). */
  refused: { code: string; message: string }[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(options: ReceiverOptions): Promise<WebhookReceiver> {
  const events: AuthcapEvent[] = [];
  const refused: WebhookReceiver['refused'] = [];
  const seen = new Set<string>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return void res.writeHead(413).end();
      chunks.push(chunk);
    }
    let event: AuthcapEvent;
    try {
      // The raw bytes as received: parsed and re-serialised JSON would not match the signature.
      event = verifyWebhook(Buffer.concat(chunks), req.headers[SIGNATURE_HEADER], options.secret, options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS);
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      refused.push({ code: err.code, message: err.message });
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end(err.code);
    }
    if (!seen.has(event.id)) {
      await options.onEvent?.(event);
      seen.add(event.id);
      events.push(event);
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/hooks`,
    events,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secret = process.env.AUTHCAP_WEBHOOK_SECRET;
  if (!secret) {
    console.error("set AUTHCAP_WEBHOOK_SECRET to the endpoint's signing secret (npm start with AUTHCAP_WEBHOOK_URL: dev.json webhook.secret)");
    process.exit(1);
  }
  const receiver = await startWebhookReceiver({
    secret,
    port: Number(process.env.PORT ?? 4000),
    onEvent: (event) => console.log(`${event.type} ${event.orderId} ${event.data.object.state}`),
  });
  console.log(`listening on ${receiver.url}`);
}
