// A real webhook receiver for tests: an HTTP server on 127.0.0.1 that records every delivery (raw
// body and headers, as a receiver must verify them) and can refuse the first tries of each event.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  eventId: string;
  body: string;
  headers: IncomingHttpHeaders;
  /** What the receiver answered. */
  status: number;
  at: number;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Deliveries answered 2xx, one per event in arrival order. */
  accepted(filter?: (event: any) => boolean): any[];
  close(): Promise<void>;
}

/** `failFirst`: how many tries of each event id get a 500 before one is accepted. */
export async function startReceiver(options: { failFirst?: number } = {}): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const tries = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const eventId = String(req.headers['authcap-event-id'] ?? '');
      const attempt = (tries.get(eventId) ?? 0) + 1;
      tries.set(eventId, attempt);
      const status = attempt <= (options.failFirst ?? 0) ? 500 : 200;
      deliveries.push({ eventId, body, headers: req.headers, status, at: Date.now() });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'try again');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries,
    accepted(filter = () => true) {
      return deliveries
        .filter((d) => d.status === 200)
        .map((d) => JSON.parse(d.body))
        .filter(filter);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
