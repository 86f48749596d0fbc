// The codec server for the Temporal Web UI (and `temporal workflow show --codec-endpoint`): POST
// /decode and /encode in Temporal's remote-codec protocol, bearer-token auth, CORS for the UI.
// The dev UI has no login and so cannot attach a bearer token: the token may instead be the first
// path segment (`<url>/<token>/decode`), a capability URL that `npm start` gives the UI and dev.json.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';

export interface CodecServerOptions {
  host?: string;
  port: number;
  codec: PayloadCodec;
  token: string;
  /** Origins allowed by CORS (the Temporal UI's). */
  allowedOrigins: string[];
}

interface WirePayload {
  metadata?: Record<string, string>;
  data?: string;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

function sameSecret(a: string, b: string): boolean {
  const hash = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(hash(a), hash(b));
}

function fromWire(p: WirePayload): Payload {
  const metadata: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) metadata[k] = new Uint8Array(Buffer.from(v, 'base64'));
  return { metadata, data: new Uint8Array(Buffer.from(p.data ?? '', 'base64')) };
}

function toWire(p: Payload): WirePayload {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) metadata[k] = Buffer.from(v).toString('base64');
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}

export function codecRequestHandler(options: CodecServerOptions) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const origin = req.headers.origin;
    const cors: Record<string, string> = {};
    if (origin && options.allowedOrigins.includes(origin)) {
      Object.assign(cors, {
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'authorization, content-type, x-namespace',
        'access-control-allow-credentials': 'true',
        vary: 'origin',
      });
    }
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', ...cors }).end(JSON.stringify(body));
    };
    if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
    const path = (req.url ?? '').split('?')[0]!;
    const match = /^(?:\/([A-Za-z0-9_-]{16,128}))?\/(decode|encode)$/.exec(path);
    if (!match || req.method !== 'POST') return send(404, { error: 'POST /decode or /encode' });
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const presented = bearer ?? match[1];
    if (!presented || !sameSecret(presented, options.token)) return send(401, { error: 'unauthorized' });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) return send(413, { error: 'body too large' });
      chunks.push(chunk as Buffer);
    }
    try {
      const { payloads } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payloads: WirePayload[] };
      if (!Array.isArray(payloads)) return send(400, { error: 'payloads must be an array' });
      const input = payloads.map(fromWire);
      const output = match[2] === 'decode' ? await options.codec.decode(input) : await options.codec.encode(input);
      send(200, { payloads: output.map(toWire) });
    } catch (err) {
      send(400, { error: (err as Error).message });
    }
  };
}

export async function startCodecServer(options: CodecServerOptions): Promise<{ url: string; close(): Promise<void> }> {
  const handler = codecRequestHandler(options);
  const server = createServer((req, res) => void handler(req, res));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://${host}:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
