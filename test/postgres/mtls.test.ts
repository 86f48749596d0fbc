// Mutual TLS and authorization on the production shape's Temporal server: nothing reaches it without
// a certificate of its client CA, the internal ports take none of those, and each caller's certificate
// grants what devstack/temporalTls.ts says and no more.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { Connection, type TLSConfig } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CertificateFiles, ensureAuthority, ensureCertificate } from '../../devstack/certificates.js';
import { freePort } from '../../devstack/process.js';
import { startTemporalOnPostgres, type TemporalOnPostgres } from '../../devstack/temporalOnPostgres.js';
import { connectionTls, ensureUiToken, type TemporalIdentity } from '../../devstack/temporalTls.js';
import { TOKEN_HEADER } from '../../devstack/uiGate.js';
import { scratchDirs } from '../support/scratch.js';

const scratch = scratchDirs('mtls');
const PERMISSION_DENIED = 7;
/** Answers that come after authorization: the call was allowed, then found wanting. */
const AUTHORIZED_THEN_REFUSED = new Set([3 /* INVALID_ARGUMENT */, 5 /* NOT_FOUND */]);

describe('mutual TLS on the Temporal server with PostgreSQL', () => {
  let cluster: TemporalOnPostgres;
  let stateDir: string;
  /** A client certificate as the stack's own, claiming every grant, but from a CA of its own. */
  let rogue: CertificateFiles;
  beforeAll(async () => {
    stateDir = scratch();
    cluster = await startTemporalOnPostgres({ stateDir, port: await freePort(), namespace: 'authcap', log: () => undefined });
    const otherDir = join(stateDir, 'another-ca');
    const otherCa = await ensureAuthority(otherDir, 'client-ca', 'authcap Temporal client CA');
    rogue = await ensureCertificate(otherCa, otherDir, 'rogue', {
      commonName: 'authcap-cli',
      organizationalUnits: ['temporal-system:admin'],
      usages: ['client'],
    });
  }, 300_000);
  afterAll(() => cluster?.stop());

  const serverCa = () => readFileSync(cluster.tls.serverCaPath);
  const pair = (files: CertificateFiles) => ({ crt: readFileSync(files.certPath), key: readFileSync(files.keyPath) });
  const connectWith = (tls: TLSConfig | undefined) => Connection.connect({ address: cluster.address, tls, connectTimeout: 3_000 });
  const as = (identity: TemporalIdentity, metadata?: Record<string, string>) =>
    Connection.connect({ address: cluster.address, tls: connectionTls(cluster.tls, cluster.tls.clients[identity]), metadata });

  it('refuses a client without a certificate: in plain text, and over TLS with none', async () => {
    await expect(connectWith(undefined)).rejects.toThrow(/Failed to connect/);
    await expect(connectWith({ serverRootCACertificate: serverCa(), serverNameOverride: cluster.tls.serverName })).rejects.toThrow(/Failed to connect/);
    // Why, at the TLS layer: the server asks for a certificate and ends the handshake without one.
    expect(await handshake(cluster.address, { ca: serverCa() })).toBe('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
  });

  it('refuses a client certificate from another CA, whatever its subject claims', async () => {
    await expect(connectWith({ serverRootCACertificate: serverCa(), serverNameOverride: cluster.tls.serverName, clientCertPair: pair(rogue) })).rejects.toThrow(
      /Failed to connect/,
    );
    expect(await handshake(cluster.address, { ca: serverCa(), cert: rogue })).toBe('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA');
    expect(await handshake(cluster.address, { ca: serverCa(), cert: cluster.tls.clients.cli })).toBe('accepted');
  });

  it("refuses the callers' certificates on the server's internal ports (internal-frontend authorizes nobody)", async () => {
    const config = readFileSync(join(stateDir, 'temporal-server', 'config', 'development.yaml'), 'utf8');
    const internalFrontendPort = /internal-frontend:\s+rpc:\s+grpcPort: (\d+)/.exec(config)?.[1];
    expect(internalFrontendPort).toBeDefined();
    const internal = `127.0.0.1:${internalFrontendPort}`;
    const internodeCa = readFileSync(cluster.tls.internodeCaPath);
    expect(await handshake(internal, { ca: internodeCa, cert: cluster.tls.clients.setup })).toBe('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA');
    expect(await handshake(internal, { ca: internodeCa, cert: cluster.tls.internode })).toBe('accepted');
  });

  it('gives each caller the grants of its certificate and no more', async () => {
    const signal = (c: Connection) =>
      c.workflowService.signalWorkflowExecution({ namespace: 'authcap', workflowExecution: { workflowId: 'no-such-workflow' }, signalName: 'void' });
    const terminate = (c: Connection) =>
      c.workflowService.terminateWorkflowExecution({ namespace: 'authcap', workflowExecution: { workflowId: 'no-such-workflow' } });
    const register = (c: Connection) =>
      c.workflowService.registerNamespace({ namespace: `mtls-${process.pid}`, workflowExecutionRetentionPeriod: msToTs(24 * 3600 * 1000) });
    const listNamespaces = (c: Connection) => c.workflowService.listNamespaces({});
    // Nothing to add: allowed callers get INVALID_ARGUMENT, the others PERMISSION_DENIED.
    const addSearchAttributes = (c: Connection) => c.operatorService.addSearchAttributes({ namespace: 'authcap', searchAttributes: {} });
    const code = (call: Promise<unknown>) =>
      call.then(
        () => 'allowed',
        (err: { code?: number }) => (err.code === PERMISSION_DENIED ? 'denied' : AUTHORIZED_THEN_REFUSED.has(err.code!) ? 'allowed' : `error ${err.code}`),
      );
    const observed: Record<string, Record<string, string>> = {};
    // The UI's certificate holds its grants only with the operator token, which the UI's gate adds.
    const callers = [
      ...(['worker', 'api', 'cli', 'setup', 'ui'] as const).map((identity) => ({ name: identity as string, identity, metadata: undefined })),
      { name: 'ui with the operator token', identity: 'ui' as const, metadata: { [TOKEN_HEADER]: ensureUiToken(stateDir) } },
      { name: 'ui with another token', identity: 'ui' as const, metadata: { [TOKEN_HEADER]: 'not-the-token' } },
    ];
    for (const { name, identity, metadata } of callers) {
      const c = await as(identity, metadata);
      try {
        observed[name] = {
          signal: await code(signal(c)),
          terminate: await code(terminate(c)),
          addSearchAttributes: await code(addSearchAttributes(c)),
          registerOtherNamespace: await code(register(c)),
          listNamespaces: await code(listNamespaces(c)),
        };
      } finally {
        await c.close();
      }
    }
    const nothing = { signal: 'denied', terminate: 'denied', addSearchAttributes: 'denied', registerOtherNamespace: 'denied', listNamespaces: 'denied' };
    const writer = { signal: 'allowed', terminate: 'allowed', addSearchAttributes: 'denied', registerOtherNamespace: 'denied', listNamespaces: 'denied' };
    expect(observed).toEqual({
      worker: writer,
      api: writer,
      cli: writer,
      setup: { ...writer, addSearchAttributes: 'allowed' },
      ui: nothing,
      'ui with the operator token': {
        signal: 'allowed',
        terminate: 'denied',
        addSearchAttributes: 'denied',
        registerOtherNamespace: 'denied',
        listNamespaces: 'allowed',
      },
      'ui with another token': nothing,
    });
  });
});

/** A TLS handshake with the server: 'accepted', or the alert code it ended with. */
function handshake(address: string, options: { ca: Buffer; cert?: CertificateFiles }): Promise<string> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const socket = connect({
      host,
      port: Number(port),
      ca: options.ca,
      servername: 'localhost',
      ALPNProtocols: ['h2'],
      ...(options.cert ? { cert: readFileSync(options.cert.certPath), key: readFileSync(options.cert.keyPath) } : {}),
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    // TLS 1.3: the client is done before the server has judged its certificate; its verdict, an
    // alert, arrives right after. None within a second: accepted.
    socket.on('secureConnect', () => {
      setTimeout(() => {
        socket.destroy();
        resolve('accepted');
      }, 1_000);
    });
  });
}
