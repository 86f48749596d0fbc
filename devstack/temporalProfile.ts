// A temporal.toml in the state dir whose default profile reaches the stack's Temporal server as the
// operator CLI: `TEMPORAL_CONFIG_FILE=.authcap/temporal.toml` then serves `npx authcap …` (through
// @temporalio/envconfig) and the `temporal` CLI alike. Written by the envconfig package itself, so its
// keys are the ones both readers expect.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { clientConfigToToml } from '@temporalio/envconfig';
import type { CertificateFiles } from './certificates.js';
import type { TemporalTls } from './temporalTls.js';

/** What dev.json tells an operator about reaching the production shape's Temporal: the CLI's files, and the profile. */
export interface OperatorTemporalAccess {
  temporalTls: { serverCaCertPath: string; serverName: string; clientCertPath: string; clientKeyPath: string };
  temporalConfigFile: string;
}

export function operatorTemporalAccess(stateDir: string, server: { address: string; namespace: string; tls: TemporalTls }): OperatorTemporalAccess {
  const client = server.tls.clients.cli;
  return {
    temporalTls: {
      serverCaCertPath: server.tls.serverCaPath,
      serverName: server.tls.serverName,
      clientCertPath: client.certPath,
      clientKeyPath: client.keyPath,
    },
    temporalConfigFile: writeTemporalProfile(stateDir, { ...server, client }),
  };
}

export function writeTemporalProfile(stateDir: string, profile: { address: string; namespace: string; tls: TemporalTls; client: CertificateFiles }): string {
  const file = resolve(stateDir, 'temporal.toml');
  const toml = clientConfigToToml({
    profiles: {
      default: {
        address: profile.address,
        namespace: profile.namespace,
        tls: {
          serverName: profile.tls.serverName,
          serverCACert: { path: profile.tls.serverCaPath },
          clientCert: { path: profile.client.certPath },
          clientKey: { path: profile.client.keyPath },
        },
      },
    },
  });
  writeFileSync(file, toml, { mode: 0o600 });
  return file;
}
