// The door in front of the production shape's Temporal Web UI: nothing reaches the UI without the
// operator token. The UI server itself authenticates nobody unless given an OIDC provider (its
// `auth.providers`, what a real deployment uses: docs/production.md), and the embedded shape has
// none on the machine; so the UI listens on a port of its own and this gate, on the UI's address,
// forwards only requests that carry the token: as a bearer (`Authorization: Bearer <token>`, for
// scripts) or as the HttpOnly, SameSite=Strict cookie its login page sets (for a browser). Anything
// else is 401 and never reaches the UI. The gate hands the token on in the authorization-extras
// header, which the UI forwards to Temporal: the UI's certificate holds its grants only with it
// (devstack/temporalTls.ts), so the UI's own port, reached around the gate, reads nothing.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';

export const LOGIN_PATH = '/authcap/login';
export const SESSION_COOKIE = 'authcap_ui';
/** Where the gate hands the token on (the UI forwards it to Temporal; the claim mapper checks it). */
export const TOKEN_HEADER = 'authorization-extras';
const MAX_LOGIN_BODY = 4_096;

export interface UiGateOptions {
  /** The UI's address, where operators go. */
  port: number;
  /** The UI server's own port behind the gate. */
  upstreamPort: number;
  token: string;
  onError?: (err: Error) => void;
}

export interface UiGate {
  url: string;
  close(): Promise<void>;
}

export async function startUiGate(options: UiGateOptions): Promise<UiGate> {
  const url = `http://127.0.0.1:${options.port}`;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  const expected = digest(options.token);
  const isToken = (value: string | undefined) => value !== undefined && value !== '' && timingSafeEqual(digest(value), expected);

  const server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch (err) {
      options.onError?.(err as Error);
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    }
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    if (path === LOGIN_PATH) {
      login(req, res);
      return;
    }
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const cookie = cookies(req.headers.cookie)[SESSION_COOKIE];
    const byBearer = isToken(bearer);
    const byCookie = !byBearer && isToken(cookie);
    if (!byBearer && !byCookie) {
      unauthorized(req, res);
      return;
    }
    // A cookie rides along with any page's request in a browser: a change it makes must come from this
    // origin (SameSite=Strict keeps other sites' requests from carrying it; this holds without it).
    const unsafe = !['GET', 'HEAD', 'OPTIONS'].includes(req.method ?? 'GET');
    if (byCookie && unsafe && req.headers.origin !== undefined && req.headers.origin !== url) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end('cross-origin request refused\n');
      return;
    }
    forward(req, res);
  }

  function forward(req: IncomingMessage, res: ServerResponse): void {
    const headers = { ...req.headers };
    // The token goes on only where the gate puts it: never as the caller's own headers or cookie.
    delete headers.authorization;
    delete headers[TOKEN_HEADER];
    const rest = (req.headers.cookie ?? '')
      .split(';')
      .map((part) => part.trim())
      .filter((part) => part !== '' && part.split('=')[0]!.trim() !== SESSION_COOKIE);
    if (rest.length > 0) headers.cookie = rest.join('; ');
    else delete headers.cookie;
    headers[TOKEN_HEADER] = options.token;
    const upstream = request({ host: '127.0.0.1', port: options.upstreamPort, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end('the Temporal UI is not answering\n');
      else res.destroy(err);
    });
    req.pipe(upstream);
  }

  function login(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'POST') {
      page(res, 200, '');
      return;
    }
    let body = '';
    let tooLong = false;
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > MAX_LOGIN_BODY && !tooLong) {
        tooLong = true;
        res.writeHead(413).end();
        req.destroy();
      }
    });
    req.on('end', () => {
      if (tooLong) return;
      const token = new URLSearchParams(body).get('token') ?? undefined;
      if (!isToken(token)) {
        page(res, 401, 'That is not the operator token.');
        return;
      }
      res.writeHead(303, {
        location: '/',
        'set-cookie': `${SESSION_COOKIE}=${encodeURIComponent(token!)}; Path=/; HttpOnly; SameSite=Strict`,
        'cache-control': 'no-store',
      });
      res.end();
    });
  }

  function unauthorized(req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    if ((req.headers.accept ?? '').includes('text/html')) {
      page(res, 401, '');
      return;
    }
    res
      .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="authcap Temporal UI"', 'cache-control': 'no-store' })
      .end(
        `${JSON.stringify({ error: 'unauthorized', message: `the operator token is needed: Authorization: Bearer <token>, or log in at ${LOGIN_PATH}` })}\n`,
      );
  }

  function page(res: ServerResponse, status: number, message: string): void {
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'www-authenticate': 'Bearer realm="authcap Temporal UI"',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    });
    res.end(`<!doctype html>
<html><head><meta charset="utf-8"><title>authcap: Temporal UI</title>
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}input{width:100%;padding:.5rem;margin:.5rem 0}</style></head>
<body><h1>Temporal UI</h1>
<p>The operator token is printed where <code>npm start</code> prints this address, and kept in <code>temporal-ui-token</code> in the state folder.</p>
${message ? `<p><strong>${message}</strong></p>` : ''}
<form method="post" action="${LOGIN_PATH}"><label>Operator token <input name="token" type="password" autocomplete="current-password" autofocus></label>
<button type="submit">Open the UI</button></form>
</body></html>
`);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function cookies(header: string | undefined): Record<string, string> {
  const found: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    const raw = part.slice(eq + 1).trim();
    try {
      found[name] = decodeURIComponent(raw);
    } catch {
      found[name] = raw;
    }
  }
  return found;
}
