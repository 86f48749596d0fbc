// The bench's own connection to Temporal (to read histories): plain on the dev server, mutual TLS on
// the production shape, with the operator CLI's certificate the stack wrote (dev.json's temporalTls).
import { readFileSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import type { Stack } from '../../devstack/stack.js';

let tls: Stack['devJson']['temporalTls'] = null;

export function useTemporalTls(given: Stack['devJson']['temporalTls']): void {
  tls = given;
}

export function connectTemporal(address: string): Promise<Connection> {
  return Connection.connect({
    address,
    // A page of a busy relayer's history passes grpc-js's 4 MB default: @temporalio/client 1.24 means to
    // allow 128 MB but names the option without its `grpc.` prefix, which grpc-js ignores.
    channelArgs: { 'grpc.max_receive_message_length': 128 * 1024 * 1024 },
    ...(tls
      ? {
          tls: {
            serverRootCACertificate: readFileSync(tls.serverCaCertPath),
            serverNameOverride: tls.serverName,
            clientCertPair: { crt: readFileSync(tls.clientCertPath), key: readFileSync(tls.clientKeyPath) },
          },
        }
      : {}),
  });
}
