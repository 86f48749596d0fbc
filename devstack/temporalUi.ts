// The Temporal Web UI beside the Temporal server on PostgreSQL (the dev server has its own built in):
// the same ui-server release the CLI v1.5.1 embeds, built once with go install and cached like the
// CLI, listening on 127.0.0.1, decoding payloads through the stack's codec server. It reaches the
// server over mutual TLS with the UI's own client certificate: read on the cluster, signal on the
// namespace (devstack/temporalTls.ts), which is all that anyone who opens the UI can do through it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { goInstallCached } from './goInstall.js';
import { startProcess, waitFor, type ManagedProcess } from './process.js';
import { type TemporalTls, temporalTlsPaths } from './temporalTls.js';

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

export async function startTemporalUi(options: TemporalUiOptions): Promise<{ url: string; process: ManagedProcess }> {
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
  const tls = options.tls ?? temporalTlsPaths(options.stateDir);
  writeFileSync(
    join(home, 'config', 'development.yaml'),
    `temporalGrpcAddress: ${options.temporalAddress}
host: 127.0.0.1
port: ${options.port}
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
    // Ready once it reads the namespace through the server: its certificate and grants work.
    ready: () => waitFor(async () => (await fetch(`${url}/api/v1/namespaces/${encodeURIComponent(options.namespace)}`)).ok, 250),
  });
  return { url, process: proc };
}
