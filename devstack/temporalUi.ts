// The Temporal Web UI beside the Temporal server on PostgreSQL (the dev server has its own built in):
// the same ui-server release the CLI v1.5.1 embeds, built once with go install and cached like the
// CLI, listening on 127.0.0.1, decoding payloads through the stack's codec server. It reaches the
// server over mutual TLS with the UI's own client certificate: read on the cluster, signal on the
// namespace (devstack/temporalTls.ts), which is all that anyone who opens the UI can do through it.
// And only an operator opens it: the UI server listens on a port of its own, and the address the
// stack prints is its gate (devstack/uiGate.ts), which wants the operator token (made at first start,
// kept 0600 in the state dir). The UI's certificate grants nothing without that token, so the UI's own
// port, reached around the gate, reads nothing either.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { goInstallCached } from './goInstall.js';
import { freePort, startProcess, waitFor, type ManagedProcess } from './process.js';
import { ensureUiToken, type TemporalTls, temporalTlsPaths, UI_TOKEN_FILE } from './temporalTls.js';
import { startUiGate, TOKEN_HEADER } from './uiGate.js';

export const TEMPORAL_UI_VERSION = 'v2.42.1';

export interface TemporalUiOptions {
  stateDir: string;
  temporalAddress: string;
  port: number;
  namespace: string;
  /** The codec server's bare origin (never a token: the UI publishes it to anyone). */
  codecEndpoint?: string;
  /** The server's certificates (default: those the Temporal server on PostgreSQL made in stateDir). */
  tls?: TemporalTls;
  log: (line: string) => void;
  onOutput?: (chunk: string) => void;
}

export interface TemporalUi {
  /** The gate's address: what operators open. */
  url: string;
  /** The operator token, and the file it is kept in. */
  token: string;
  tokenFile: string;
  process: ManagedProcess;
  /** Stops the gate, then the UI server. */
  stop(): Promise<void>;
}

export async function startTemporalUi(options: TemporalUiOptions): Promise<TemporalUi> {
  const [binary] = process.env.TEMPORAL_UI_SERVER_PATH
    ? [process.env.TEMPORAL_UI_SERVER_PATH]
    : await goInstallCached(
        {
          title: 'the Temporal Web UI',
          folder: 'temporal-ui',
          version: TEMPORAL_UI_VERSION,
          packages: ['github.com/temporalio/ui-server/v2/cmd/server'],
          overrideVariable: 'TEMPORAL_UI_SERVER_PATH',
        },
        options.log,
      );
  const home = join(options.stateDir, 'temporal-ui');
  mkdirSync(join(home, 'config'), { recursive: true, mode: 0o700 });
  const url = `http://127.0.0.1:${options.port}`;
  const ownPort = await freePort();
  const own = `http://127.0.0.1:${ownPort}`;
  const token = ensureUiToken(options.stateDir);
  const tls = options.tls ?? temporalTlsPaths(options.stateDir);
  writeFileSync(
    join(home, 'config', 'development.yaml'),
    `temporalGrpcAddress: ${options.temporalAddress}
host: 127.0.0.1
port: ${ownPort}
publicPath: ""
enableUi: true
defaultNamespace: ${options.namespace}
notifyOnNewVersion: false
cors:
  cookieInsecure: true
  allowOrigins: ["${url}"]
codec:
  endpoint: "${options.codecEndpoint ?? ''}"
tls:
  caFile: ${JSON.stringify(tls.serverCaPath)}
  certFile: ${JSON.stringify(tls.clients.ui.certPath)}
  keyFile: ${JSON.stringify(tls.clients.ui.keyPath)}
  serverName: ${tls.serverName}
  enableHostVerification: true
`,
    { mode: 0o600 },
  );
  const proc = await startProcess({
    name: 'temporal-ui',
    command: binary!,
    args: ['--root', home, '--config', 'config', '--env', 'development', 'start'],
    onOutput: options.onOutput,
    readyTimeoutMs: 30_000,
    // Ready once it reads the namespace through the server: its certificate, the token and grants work.
    ready: () =>
      waitFor(async () => (await fetch(`${own}/api/v1/namespaces/${encodeURIComponent(options.namespace)}`, { headers: { [TOKEN_HEADER]: token } })).ok, 250),
  });
  const gate = await startUiGate({
    port: options.port,
    upstreamPort: ownPort,
    token,
    onError: (err) => options.log(`authcap: Temporal UI gate: ${err.message}`),
  }).catch(async (err) => {
    await proc.stop();
    throw err;
  });
  return {
    url,
    token,
    tokenFile: join(options.stateDir, UI_TOKEN_FILE),
    process: proc,
    stop: async () => {
      await gate.close();
      await proc.stop();
    },
  };
}
