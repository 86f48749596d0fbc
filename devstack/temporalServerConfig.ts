// The production shape's Temporal server configuration: PostgreSQL persistence and SQL visibility,
// every service on 127.0.0.1, and mutual TLS everywhere. The frontend (gRPC and its HTTP API) takes
// only client certificates of the client CA, and authorizes each by its grants; history, matching,
// internal-frontend, the worker service and every service's membership (ringpop) port take only the
// internode certificate. The system worker reaches the frontend API through internal-frontend
// (Temporal's advice for a cluster with an authorizer), so it needs no grant on the public frontend.
//
// internal-frontend serves gRPC only, never HTTP: Temporal's HTTP API server takes the *frontend's*
// TLS settings whatever service it belongs to, so an httpPort on internal-frontend accepted client
// certificates of the client CA, and internal-frontend maps every caller to system admin (issue 35:
// a certificate granting only `signal`, or nothing, terminated and reset workflows through it). No
// port that takes client certificates may map callers to admin; test/postgres/doors.test.ts probes
// every port the server listens on.
import type { Postgres } from './postgres.js';
import type { TemporalTls } from './temporalTls.js';

// Visibility calls per namespace and frontend: the server's default (10/s) is sized for a cluster
// with many frontends; the feed, the CLI and the watcher's look-ups need more on one.
// Eager activities: a workflow task that schedules an activity on its own task queue gets it back in
// the completion's answer when the worker has a free slot, skipping a matching round trip.
// Ringpop over TLS: the membership ports speak plain TChannel by default, where anyone on the machine
// could join the ring; with it they take the internode certificate like the services' gRPC ports.
export const DYNAMIC_CONFIG = `frontend.namespaceRPS.visibility:
  - value: 200
system.enableActivityEagerExecution:
  - value: true
system.enableRingpopTLS:
  - value: true
`;

export interface ServerConfigOptions {
  db: Postgres;
  shards: number;
  /** internal: the ports no client uses (9): gRPC of history, matching, worker and internal-frontend, membership of each service. */
  ports: { grpc: number; http: number; metrics: number; internal: number[] };
  dynamicConfigFile: string;
  tls: TemporalTls;
}

export function serverConfig({ db, shards, ports, dynamicConfigFile, tls }: ServerConfigOptions): string {
  const [
    historyGrpc,
    matchingGrpc,
    workerGrpc,
    internalFrontendGrpc,
    frontendMembership,
    historyMembership,
    matchingMembership,
    workerMembership,
    internalFrontendMembership,
  ] = ports.internal;
  const store = (database: string, maxConns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${database}
        connectAddr: "${db.host}:${db.port}"
        connectProtocol: tcp
        user: ${db.user}
        password: "${db.password}"
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
  const service = (grpc: number, membership: number, extra = '') => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnIP: 127.0.0.1${extra}`;
  // Both sides verify: the server asks for a client certificate of caPath, the client checks the
  // server's against the same CA and a name in it (Go's TLS needs one to check). Paths are
  // JSON strings, which YAML reads as double-quoted scalars whatever the state dir is called.
  const mutualTls = (certificate: { certPath: string; keyPath: string }, caPath: string) => `
      server:
        certFile: ${JSON.stringify(certificate.certPath)}
        keyFile: ${JSON.stringify(certificate.keyPath)}
        requireClientAuth: true
        clientCaFiles: [${JSON.stringify(caPath)}]
      client:
        serverName: ${tls.serverName}
        rootCaFiles: [${JSON.stringify(caPath)}]`;
  return `log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: ${shards}
  datastores:
    default:${store('temporal', 20)}
    visibility:${store('temporal_visibility', 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  tls:
    internode:${mutualTls(tls.internode, tls.internodeCaPath)}
    frontend:${mutualTls(tls.frontend, tls.clientCaPath)}
  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: 127.0.0.1:${ports.metrics}
services:
  frontend:${service(ports.grpc, frontendMembership!, `\n      httpPort: ${ports.http}`)}
  internal-frontend:${service(internalFrontendGrpc!, internalFrontendMembership!)}
  history:${service(historyGrpc!, historyMembership!)}
  matching:${service(matchingGrpc!, matchingMembership!)}
  worker:${service(workerGrpc!, workerMembership!)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:${ports.grpc}
      httpAddress: 127.0.0.1:${ports.http}
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${dynamicConfigFile}
  pollInterval: 10s
`;
}
