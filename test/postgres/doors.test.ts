// The production shape as an outside prober sees it (issue 35): `AUTHCAP_TEMPORAL=postgres npm start`
// as a user runs it, every port its processes listen on found from /proc (not from a list of ours),
// and certificates minted from its own client CA that grant nothing, only reads, or only signals.
// Each door must refuse what the certificate does not grant; the Web UI must ask for the operator
// token; and no child may carry a key it does not use in its environment.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { freePort } from '../../devstack/process.js';
import { issueClientCertificate, temporalTlsPaths } from '../../devstack/temporalTls.js';
import { startNpmStart, type NpmStart } from '../support/npmStart.js';
import { scratchDirs } from '../support/scratch.js';
import {
  type Caller,
  commandLine,
  environment,
  executableName,
  grpcCall,
  handshake,
  httpCall,
  type Listening,
  listeningSockets,
  type Outcome,
  probes,
  processTree,
} from './doors.js';

const scratch = scratchDirs('doors');
const NAMESPACE = 'authcap';
/** Set in npm start's environment and read by nothing: no child may see it. */
const CANARY = { DOORS_CANARY_SECRET: 'canary-6b1f0e' };

async function stopNpmStart(started: NpmStart | undefined): Promise<void> {
  if (!started || started.main.exitCode !== null) return;
  started.main.kill('SIGTERM');
  const timer = setTimeout(() => started.main.kill('SIGKILL'), 60_000);
  await started.exited;
  clearTimeout(timer);
}

async function ports(): Promise<Record<string, string>> {
  return {
    AUTHCAP_API_PORT: String(await freePort()),
    AUTHCAP_RPC_PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
  };
}

/** Each process of the stack by what it is: its executable, or for node the entry it runs. */
function kindOf(pid: number): string {
  const exe = executableName(pid);
  if (exe !== 'node') return exe;
  const args = commandLine(pid).join(' ');
  if (/worker\/main\.(ts|js)/.test(args)) return 'worker';
  if (/api\/main\.(ts|js)/.test(args)) return 'api';
  if (/devstack\/main\.ts/.test(args)) return 'npm start';
  return `node ${args}`;
}

/** What no process but the worker and the API may carry (the codec server runs inside npm start itself). */
function secretsIn(env: Record<string, string>): string[] {
  return Object.keys(env).filter((name) => name === 'AUTHCAP_CODEC_KEYS' || name.startsWith('MERCHANT_') || name in CANARY);
}

/** The environment of every child of npm start, by kind: what it carries of ours. */
function childEnvironments(main: number): { kind: string; pid: number; env: Record<string, string> }[] {
  return (
    processTree(main)
      .filter((pid) => pid !== main)
      .map((pid) => ({ pid, kind: kindOf(pid), env: environment(pid) }))
      // esbuild: tsx's compiler service, part of the node process that runs from source (not a server of the stack).
      .filter((child) => child.kind !== '' && child.kind !== 'esbuild')
  );
}

function expectNoSecretsWhereNotNeeded(children: { kind: string; pid: number; env: Record<string, string> }[], expectedKinds: string[]) {
  const kinds = new Set(children.map((c) => c.kind));
  for (const kind of expectedKinds) expect(kinds, `no ${kind} among npm start's children`).toContain(kind);
  const carried = children.map(({ kind, env }) => ({ kind, secrets: secretsIn(env).sort() }));
  const expected = children.map(({ kind }) => ({
    kind,
    secrets: kind === 'worker' ? ['AUTHCAP_CODEC_KEYS', 'MERCHANT_PRIVATE_KEY', 'MERCHANT_PRIVATE_KEYS'] : kind === 'api' ? ['AUTHCAP_CODEC_KEYS'] : [],
  }));
  expect(carried).toEqual(expected);
  // Servers that read none of authcap's settings get none of them, nor any Temporal client setting.
  for (const { kind, env } of children) {
    if (kind === 'worker' || kind === 'api') continue;
    expect(
      Object.keys(env).filter((name) => /^(AUTHCAP_|TEMPORAL_|MERCHANT_|RPC_URL|TOKEN_ADDRESS|SQL_)/.test(name)),
      `${kind}'s environment`,
    ).toEqual([]);
  }
}

describe.runIf(process.platform === 'linux')('the production shape, door by door', () => {
  let started: NpmStart;
  let stateDir: string;
  let callers: Caller[];

  beforeAll(async () => {
    // The scratch folder itself: PostgreSQL, run as its own user under root, must pass through every folder above its data.
    stateDir = scratch();
    started = await startNpmStart(stateDir, { ...(await ports()), AUTHCAP_TEMPORAL: 'postgres', AUTHCAP_WORKERS: '1', AUTHCAP_APIS: '1', ...CANARY });
    const tls = temporalTlsPaths(stateDir);
    // A prober with the client CA's key mints what it likes; these are the certificates issue 35 names.
    callers = [
      { name: 'no grant', files: await issueClientCertificate(tls, 'doors-none', []) },
      { name: 'read only', files: await issueClientCertificate(tls, 'doors-read', [`${NAMESPACE}:read`]) },
      { name: 'signal only', files: await issueClientCertificate(tls, 'doors-signal', [`${NAMESPACE}:signal`]) },
    ];
  }, 600_000);
  afterAll(() => stopNpmStart(started), 90_000);

  const temporalServerPid = () => {
    const pid = processTree(started.main.pid!).find((p) => executableName(p) === 'temporal-server');
    expect(pid, 'the Temporal server among npm start’s processes').toBeDefined();
    return pid!;
  };

  it('listens on 127.0.0.1 alone, every process of it', () => {
    const sockets = processTree(started.main.pid!).flatMap((pid) => {
      try {
        return listeningSockets(pid).map((s) => ({ ...s, kind: kindOf(pid) }));
      } catch {
        return [];
      }
    });
    expect(sockets.length).toBeGreaterThan(5);
    expect(sockets.filter((s) => s.address !== '127.0.0.1' && s.address !== '::ffff:127.0.0.1')).toEqual([]);
  });

  it('refuses on every port of the Temporal server what a client certificate does not grant, over gRPC and HTTP', async () => {
    const config = parse(readFileSync(join(stateDir, 'temporal-server', 'config', 'development.yaml'), 'utf8'));
    const frontendGrpc: number = config.services.frontend.rpc.grpcPort;
    const frontendHttp: number = config.services.frontend.rpc.httpPort;
    const metrics = Number(String(config.global.metrics.prometheus.listenAddress).split(':').pop());
    const listening: Listening[] = listeningSockets(temporalServerPid());
    const found = [...new Set(listening.map((s) => s.port))].sort();
    // Found from the process, so a door the config does not name is probed all the same.
    expect(found).toContain(frontendGrpc);
    expect(found).toContain(frontendHttp);
    expect(found.length).toBeGreaterThanOrEqual(8);
    const kindOfPort = (port: number) =>
      port === frontendGrpc ? 'frontend gRPC' : port === frontendHttp ? 'frontend HTTP' : port === metrics ? 'metrics' : 'internal';
    const granted = (caller: Caller, needs: string) =>
      (caller.name === 'read only' && needs === 'read') || (caller.name === 'signal only' && needs === 'signal');

    const wrong: string[] = [];
    const seen: string[] = [];
    const calls: (() => Promise<void>)[] = [];
    const check = (port: number, caller: Caller, how: string, probe: string, call: () => Promise<Outcome>, shouldAllow: boolean) =>
      calls.push(async () => {
        const outcome = await call();
        const line = `${kindOfPort(port)} ${port}, ${caller.name}, ${how} ${probe}: ${outcome}`;
        seen.push(line);
        if ((outcome === 'allowed') !== shouldAllow) wrong.push(`${line} (expected ${shouldAllow ? 'allowed' : 'refused'})`);
      });
    for (const port of found) {
      const kind = kindOfPort(port);
      for (const caller of callers) {
        for (const probe of probes(NAMESPACE)) {
          // The frontend allows over TLS what the grant names and nothing else; every other port nothing.
          for (const tls of [true, false]) {
            const how = tls ? 'gRPC/TLS' : 'gRPC/h2c';
            check(
              port,
              caller,
              how,
              probe.name,
              () => grpcCall(port, caller, tls, probe.grpc.method, probe.grpc.message),
              tls && kind === 'frontend gRPC' && granted(caller, probe.needs),
            );
            const http = probe.http;
            if (!http) continue;
            check(
              port,
              caller,
              tls ? 'HTTPS' : 'HTTP',
              probe.name,
              () => httpCall(port, caller, tls, http.method, http.path, http.body),
              tls && kind === 'frontend HTTP' && granted(caller, probe.needs),
            );
          }
        }
      }
    }
    // A few at a time: a port that reads a probe as a partial frame and waits costs its timeout once per call.
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        for (let next = calls.shift(); next; next = calls.shift()) await next();
      }),
    );
    seen.sort();
    expect(wrong, seen.join('\n')).toEqual([]);

    // The internal ports want the internode CA: a client certificate is refused in the handshake,
    // the servers' own certificate is taken (so the port is TLS and the refusal is about the CA).
    const tls = temporalTlsPaths(stateDir);
    const internal = found.filter((port) => kindOfPort(port) === 'internal');
    expect(internal.length).toBeGreaterThanOrEqual(6);
    const handshakes: Record<number, string[]> = {};
    for (const port of internal) {
      handshakes[port] = [await handshake(port, tls.internode), ...(await Promise.all(callers.map((c) => handshake(port, c.files))))];
    }
    for (const port of internal) {
      const [internode, ...clients] = handshakes[port]!;
      expect(internode, `internode certificate on ${port}: ${JSON.stringify(handshakes)}`).toBe('accepted');
      for (const verdict of clients) expect(verdict, `client certificate on ${port}: ${JSON.stringify(handshakes)}`).not.toBe('accepted');
    }
  });

  it('asks for the operator token before the Web UI answers: page, API and signal routes', async () => {
    const ui = started.dev.temporalUiUrl!;
    expect(ui).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const tokenFile = join(stateDir, 'temporal-ui-token');
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(started.output()).toContain(token);

    const ns = encodeURIComponent(NAMESPACE);
    const routes = [
      { method: 'GET', path: '/' },
      { method: 'GET', path: `/namespaces/${ns}/workflows` },
      { method: 'GET', path: '/api/v1/settings' },
      { method: 'GET', path: `/api/v1/namespaces/${ns}/workflows` },
      { method: 'GET', path: `/api/v1/namespaces/${ns}/workflows/doors-no-such/history` },
      { method: 'POST', path: `/api/v1/namespaces/${ns}/workflows/doors-no-such/signal/void` },
    ];
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong' },
      { cookie: 'authcap_ui=wrong' },
      { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` },
    ];
    for (const headers of attempts) {
      for (const { method, path } of routes) {
        const res = await fetch(`${ui}${path}`, { method, headers, redirect: 'manual' });
        expect(`${method} ${path} ${JSON.stringify(headers)}: ${res.status}`).toBe(`${method} ${path} ${JSON.stringify(headers)}: 401`);
        // Not a byte from the UI: no CSRF cookie, no settings, no history.
        expect(res.headers.get('set-cookie') ?? '').not.toMatch(/_csrf/);
      }
    }

    // With the token as a bearer: the UI answers, reads through its certificate, and signals.
    const bearer = { authorization: `Bearer ${token}` };
    expect((await fetch(`${ui}/`, { headers: bearer })).status).toBe(200);
    const list = await fetch(`${ui}/api/v1/namespaces/${ns}/workflows`, { headers: bearer });
    expect(list.status).toBe(200);
    expect(await list.json()).toHaveProperty('executions');
    const settings = await fetch(`${ui}/api/v1/settings`, { headers: bearer });
    const csrf = /_csrf=([^;]+)/.exec(settings.headers.get('set-cookie') ?? '')?.[1];
    expect(csrf).toBeDefined();
    const signal = await fetch(`${ui}/api/v1/namespaces/${ns}/workflows/doors-no-such/signal/void`, {
      method: 'POST',
      headers: { ...bearer, cookie: `_csrf=${csrf}`, 'x-csrf-token': csrf!, 'content-type': 'application/json', origin: ui },
      body: '{}',
    });
    // Past the UI and Temporal's authorizer: the workflow is not there (404), not a refusal (401/403).
    expect(signal.status).toBe(404);

    // A browser: the login page, then a cookie that only this origin sends.
    const login = await fetch(`${ui}/authcap/login`, { method: 'POST', body: new URLSearchParams({ token }), redirect: 'manual' });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/authcap_ui=/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    const session = cookie.split(';')[0]!;
    expect((await fetch(`${ui}/api/v1/namespaces/${ns}/workflows`, { headers: { cookie: session } })).status).toBe(200);
    // A change carried by the cookie must come from the UI's own origin (another site's page cannot make one).
    const crossSite = await fetch(`${ui}/api/v1/namespaces/${ns}/workflows/doors-no-such/signal/void`, {
      method: 'POST',
      headers: { cookie: session, origin: 'http://127.0.0.1:1', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(crossSite.status).toBe(403);
    const wrongLogin = await fetch(`${ui}/authcap/login`, { method: 'POST', body: new URLSearchParams({ token: 'wrong' }), redirect: 'manual' });
    expect(wrongLogin.status).toBe(401);
    expect(wrongLogin.headers.get('set-cookie')).toBeNull();
  });

  it("the UI's own port behind the gate reads nothing without the token: its certificate alone grants nothing", async () => {
    const uiPid = processTree(started.main.pid!).find((pid) => kindOf(pid) === 'server' && commandLine(pid).includes('start'));
    expect(uiPid, 'the Temporal UI server process').toBeDefined();
    const own = listeningSockets(uiPid!).map((s) => s.port);
    expect(own.length).toBeGreaterThan(0);
    for (const port of own) {
      const ns = encodeURIComponent(NAMESPACE);
      const read = await fetch(`http://127.0.0.1:${port}/api/v1/namespaces/${ns}/workflows`);
      expect(`${port}: ${read.status}`).toMatch(/: (401|403)$/);
      const namespaces = await fetch(`http://127.0.0.1:${port}/api/v1/namespaces`);
      expect(`${port}: ${namespaces.status}`).toMatch(/: (401|403)$/);
    }
  });

  it('starts each child with the environment it needs and no key it does not use', () => {
    expectNoSecretsWhereNotNeeded(childEnvironments(started.main.pid!), ['temporal-server', 'postgres', 'server', 'anvil', 'worker', 'api']);
  });
});

describe.runIf(process.platform === 'linux')('the dev shape (npm start), its children’s environments', () => {
  let started: NpmStart;
  beforeAll(async () => {
    started = await startNpmStart(join(scratch(), 'state'), { ...(await ports()), ...CANARY });
  }, 300_000);
  afterAll(() => stopNpmStart(started), 90_000);

  it('starts each child with the environment it needs and no key it does not use', () => {
    expectNoSecretsWhereNotNeeded(childEnvironments(started.main.pid!), ['temporal', 'anvil', 'worker', 'api']);
  });
});
