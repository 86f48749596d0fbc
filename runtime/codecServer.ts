// The codec server for the Temporal Web UI and the `temporal` CLI (`--codec-endpoint`): POST /decode
// and /encode in Temporal's remote-codec protocol, CORS for the UI. It decodes payment credentials,
// so every request must prove who sends it: the shared token (bearer header or first path segment),
// a verified access token (production: the Temporal UI's OIDC token, `codec.passAccessToken`), or a
// check the embedder supplies (the dev stack: the same local user, see devstack/localPeer.ts).
// /encode seals an input as an operator's, so an access token must also carry the operator role
// (codecAuth.ts); without it the caller may only decode (403).
// It runs inside the `npm start` supervisor: no request, however broken, may throw out of it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Payload } from '@temporalio/common';
import type { EncryptionCodec } from './codec.js';

export interface CodecServerOptions {
  host?: string;
  port: number;
  /** Opens payloads for people to read; seals an operator's input as an operator's (it can void, nothing more). */
  codec: Pick<EncryptionCodec, 'openForDisplay' | 'sealForOperator'>;
  /** A shared secret: `Authorization: Bearer <token>` or `<url>/<token>/decode`. */
  token?: string;
  /** Accepts a bearer that is not the shared token, e.g. a JWT access token (codecAuth.ts, jwtBearerVerifier); undefined refuses it. */
  verifyBearer?: (bearer: string) => Promise<VerifiedBearer | undefined>;
  /** Decides about requests that present no credential at all; without it they are 401. */
  trustRequest?: (req: IncomingMessage) => Promise<boolean>;
  /** Origins allowed by CORS (the Temporal UI's). */
  allowedOrigins: string[];
  maxBodyBytes?: number;
  /** The whole request must arrive within this (slow bodies); default 30 s. */
  requestTimeoutMs?: number;
  /** The headers must arrive within this (slow-loris); default 10 s. */
  headersTimeoutMs?: number;
  /** Server-level errors after it listens (logged by the supervisor, never thrown). */
  onError?: (err: Error) => void;
}

/**
 * A bearer the verifier accepted. Any may decode (display only); `operator` may also encode, which
 * seals an input as an operator's (it can void an authorization).
 */
export interface VerifiedBearer {
  operator: boolean;
}

export interface CodecServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

interface WirePayload {
  metadata?: Record<string, string>;
  data?: string;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function sameSecret(a: string, b: string): boolean {
  const hash = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(hash(a), hash(b));
}

function base64(value: unknown, what: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) throw new HttpError(400, `${what} must be a base64 string`);
  return new Uint8Array(Buffer.from(value, 'base64'));
}

function fromWire(p: unknown, i: number): Payload {
  if (typeof p !== 'object' || p === null || Array.isArray(p)) throw new HttpError(400, `payloads[${i}] must be an object`);
  const { metadata = {}, data = '' } = p as WirePayload;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new HttpError(400, `payloads[${i}].metadata must be an object`);
  const decoded: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(metadata)) decoded[k] = base64(v, `payloads[${i}].metadata.${k}`);
  return { metadata: decoded, data: base64(data, `payloads[${i}].data`) };
}

function toWire(p: Payload): WirePayload {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) metadata[k] = Buffer.from(v).toString('base64');
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}

/** `{}` is what the Go SDK's remote codec sends for no payloads (protobuf JSON omits empty lists). */
function parsePayloads(text: string): Payload[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'the body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'the body must be {"payloads": [...]}');
  const { payloads = [] } = body as { payloads?: unknown };
  if (!Array.isArray(payloads)) throw new HttpError(400, 'payloads must be an array');
  return payloads.map(fromWire);
}

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw new HttpError(413, `the body is larger than ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, `the body is larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Who sent the request: undefined unless proven; `operator` if it may encode. The shared token is the
 * operator CLI's secret; the embedder's trusted requests (the dev stack: the same OS user as `npm
 * start`, who can read that token anyway) are operators too; a verified bearer is one if it says so.
 */
async function caller(req: IncomingMessage, pathToken: string | undefined, options: CodecServerOptions): Promise<{ operator: boolean } | undefined> {
  const header = req.headers.authorization;
  const bearer = /^Bearer ([\x21-\x7E]{1,4096})$/.exec(header ?? '')?.[1];
  if (header !== undefined && bearer === undefined) return undefined;
  // Every credential presented must be good: a wrong one is never rescued by another check.
  if (pathToken !== undefined && !(options.token && sameSecret(pathToken, options.token))) return undefined;
  let operator = pathToken !== undefined;
  if (bearer !== undefined) {
    if (options.token !== undefined && sameSecret(bearer, options.token)) operator = true;
    else {
      const verified = options.verifyBearer && (await options.verifyBearer(bearer).catch(() => undefined));
      if (!verified) return undefined;
      operator ||= verified.operator === true;
    }
  }
  if (pathToken !== undefined || bearer !== undefined) return { operator };
  const trusted = options.trustRequest ? await options.trustRequest(req).catch(() => false) : false;
  return trusted ? { operator: true } : undefined;
}

export function codecRequestHandler(options: CodecServerOptions) {
  const limit = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const origin = req.headers.origin;
    const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': 'no-store' };
    if (origin && options.allowedOrigins.includes(origin)) {
      Object.assign(headers, {
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'authorization, content-type, x-namespace',
        'access-control-allow-credentials': 'true',
        vary: 'origin',
      });
    }
    const send = (status: number, body: unknown) => {
      // An unread body must not be drained for ever after a refusal: close the connection instead.
      if (status >= 400) headers.connection = 'close';
      res.writeHead(status, headers).end(JSON.stringify(body));
    };
    if (req.method === 'OPTIONS') {
      const { 'content-type': _, ...cors } = headers;
      return void res.writeHead(204, cors).end();
    }
    const path = (req.url ?? '').split('?')[0]!;
    const match = /^(?:\/([A-Za-z0-9_-]{16,128}))?\/(decode|encode)$/.exec(path);
    if (!match || req.method !== 'POST') return send(404, { error: 'POST /decode or /encode' });
    const who = await caller(req, match[1], options);
    if (!who) return send(401, { error: 'unauthorized' });
    // Before the body is read: a caller who may only read seals nothing, however well-formed its input.
    if (match[2] === 'encode' && !who.operator) {
      return send(403, { error: 'forbidden', message: "encoding seals an operator's input: the access token lacks the operator role" });
    }
    // JSON only: a page elsewhere cannot send it cross-origin without a CORS preflight.
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') return send(415, { error: 'send application/json' });
    try {
      const input = parsePayloads(await readBody(req, limit));
      const output = match[2] === 'decode' ? await options.codec.openForDisplay(input) : await options.codec.sealForOperator(input);
      send(200, { payloads: output.map(toWire) });
    } catch (err) {
      if (req.destroyed && !req.complete) return; // the client went away mid-body: nobody to answer
      if (err instanceof HttpError) return send(err.status, { error: err.message });
      send(400, { error: (err as Error).message });
    }
  };
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      await handle(req, res);
    } catch (err) {
      options.onError?.(err as Error);
      if (!res.headersSent && !res.destroyed) res.writeHead(500, { 'content-type': 'application/json', connection: 'close' }).end('{"error":"internal error"}');
      else res.destroy();
    }
  };
}

export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const handler = codecRequestHandler(options);
  // Node checks the request and headers timeouts on this interval (30 s by default): check often.
  const server = createServer({ connectionsCheckingInterval: 500 }, (req, res) => void handler(req, res));
  server.requestTimeout = options.requestTimeoutMs ?? 30_000;
  server.headersTimeout = Math.min(options.headersTimeoutMs ?? 10_000, server.requestTimeout);
  server.keepAliveTimeout = 5_000;
  server.maxConnections = 256;
  server.on('clientError', (_err, socket) => {
    if (socket.writable && !socket.destroyed) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => options.onError?.(err));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
