// An outside prober's tools for the production shape: the listening sockets of a process tree (read
// from /proc, not from any list of ours), and raw gRPC and HTTP calls to any port with any client
// certificate, without trusting the server (a prober does not care who the server is). Each call
// says whether it got past authorization: 'allowed' (the server answered with anything but a refusal),
// 'denied' (PERMISSION_DENIED, UNAUTHENTICATED, 401, 403) or 'refused: <why>' (no TLS with that
// certificate, no such service or route, not that protocol at all).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import proto from '@temporalio/proto';
import type { CertificateFiles } from '../../devstack/certificates.js';

const { temporal } = proto;

export interface Listening {
  pid: number;
  address: string;
  port: number;
}

/** The pid and every descendant (children, their children…), from /proc. */
export function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parents) if (ppid === tree[i] && !tree.includes(pid)) tree.push(pid);
  return tree;
}

/** The executable's file name (temporal-server, postgres, anvil, node…), or '' if it is gone. */
export function executableName(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/exe`)
      .split('/')
      .pop()!
      .replace(/ \(deleted\)$/, '');
  } catch {
    return '';
  }
}

export function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** A process's environment as the kernel shows it to whoever may read /proc/<pid>/environ. */
export function environment(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/** Every TCP socket the process listens on: its socket inodes matched against /proc/<pid>/net/tcp and tcp6. */
export function listeningSockets(pid: number): Listening[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const match = /^socket:\[(\d+)\]$/.exec(target);
      if (match) inodes.add(match[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const found: Listening[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const lines = readFileSync(`/proc/${pid}/net/${table}`, 'utf8').trim().split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      const [, local, , state, , , , , , inode] = fields;
      if (state !== '0A' || !inodes.has(inode!)) continue; // 0A: LISTEN
      const [hexAddress, hexPort] = local!.split(':');
      found.push({ pid, address: decodeAddress(hexAddress!), port: Number.parseInt(hexPort!, 16) });
    }
  }
  return found;
}

function decodeAddress(hex: string): string {
  if (hex.length === 8) return [3, 2, 1, 0].map((i) => Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
  if (/^0{24}0100007F$/i.test(hex)) return '::ffff:127.0.0.1';
  if (/^0{32}$/.test(hex)) return '::';
  if (/^0{24}01000000$/.test(hex)) return '::1';
  return hex;
}

export type Outcome = 'allowed' | 'denied' | `refused: ${string}`;

export interface Caller {
  name: string;
  files?: CertificateFiles;
}

const pem = (files: CertificateFiles | undefined) => (files ? { cert: readFileSync(files.certPath), key: readFileSync(files.keyPath) } : {});

/** One unary gRPC call over TLS (h2) or plain text (h2c): its grpc-status, as an outcome. */
export function grpcCall(port: number, caller: Caller, tls: boolean, method: string, message: Uint8Array, timeoutMs = 6_000): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.destroy();
      resolve(outcome);
    };
    const session = http2Connect(
      `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
      tls ? { rejectUnauthorized: false, servername: 'localhost', ALPNProtocols: ['h2'], ...pem(caller.files) } : {},
    );
    const timer = setTimeout(() => done('refused: no answer'), timeoutMs);
    session.on('error', (err: NodeJS.ErrnoException) => done(`refused: ${err.code ?? err.message}`));
    const stream = session.request({
      ':method': 'POST',
      ':path': method,
      'content-type': 'application/grpc',
      te: 'trailers',
      // A poll that is allowed waits for work: it answers DEADLINE_EXCEEDED (or nothing) by then.
      'grpc-timeout': '2S',
    });
    const statusOf = (headers: Record<string, unknown>) => {
      const status = headers['grpc-status'];
      if (status === undefined) return;
      const code = Number(status);
      if (code === 7 || code === 16) done('denied');
      else if (code === 12) done('refused: no such service here');
      else done('allowed');
    };
    stream.on('response', (headers) => {
      if (headers[':status'] !== 200) done(`refused: HTTP ${headers[':status']}`);
      else statusOf(headers);
    });
    stream.on('trailers', statusOf);
    stream.on('error', (err: NodeJS.ErrnoException) => done(`refused: ${err.code ?? err.message}`));
    stream.on('close', () => done('refused: closed without a status'));
    stream.on('data', () => undefined);
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    stream.end(frame);
  });
}

/** One HTTP/1.1 request over TLS or plain text, as an outcome: JSON errors of the Temporal HTTP API read by their gRPC code. */
export function httpCall(
  port: number,
  caller: Caller,
  tls: boolean,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Outcome> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const options = {
      host: '127.0.0.1',
      port,
      method,
      path,
      timeout: 6_000,
      headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(tls ? { rejectUnauthorized: false, servername: 'localhost', ...pem(caller.files) } : {}),
    };
    const req = (tls ? httpsRequest : httpRequest)(options, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve(httpOutcome(res.statusCode ?? 0, text)));
      res.on('error', (err) => resolve(`refused: ${err.message}`));
    });
    req.on('timeout', () => req.destroy(new Error('no answer')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(`refused: ${err.code ?? err.message}`));
    req.end(payload);
  });
}

function httpOutcome(status: number, text: string): Outcome {
  if (status === 401 || status === 403) return 'denied';
  let json: { code?: number; message?: string } | undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (status >= 200 && status < 300) return json ? 'allowed' : `refused: HTTP ${status}, not the API`;
  if (json && typeof json.code === 'number') {
    if (json.code === 7 || json.code === 16) return 'denied';
    // grpc-gateway's answer to a path it has no route for: the API is not here.
    if (json.code === 5 && json.message === 'Not Found') return 'refused: no such route';
    if (json.code === 12) return 'refused: not implemented here';
    return 'allowed';
  }
  return `refused: HTTP ${status}`;
}

/** A TLS handshake presenting `cert`: 'accepted', or why not (TLS 1.3 sends the verdict on the certificate after the handshake). */
export function handshake(port: number, cert: CertificateFiles | undefined): Promise<string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost', ALPNProtocols: ['h2'], ...pem(cert) });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('no answer');
    }, 5_000);
    socket.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(err.code ?? err.message);
    });
    socket.on('secureConnect', () => {
      setTimeout(() => {
        clearTimeout(timer);
        socket.destroy();
        resolve('accepted');
      }, 1_000);
    });
  });
}

/** What a caller may try: each Temporal call by gRPC, and by the HTTP API where it has a route. */
export interface Probe {
  name: string;
  /** Which grant would allow it. */
  needs: 'read' | 'signal' | 'write' | 'admin';
  grpc: { method: string; message: Uint8Array };
  http?: { method: string; path: string; body?: unknown };
}

export function probes(namespace: string): Probe[] {
  const wf = `doors-no-such-${process.pid}`;
  const ns = encodeURIComponent(namespace);
  const svc = '/temporal.api.workflowservice.v1.WorkflowService/';
  const v1 = temporal.api.workflowservice.v1;
  const execution = { workflowId: wf };
  const requestId = '5f1d2c3b-0000-4000-8000-000000000001';
  return [
    {
      name: 'list',
      needs: 'read',
      grpc: { method: `${svc}ListWorkflowExecutions`, message: v1.ListWorkflowExecutionsRequest.encode({ namespace, pageSize: 1 }).finish() },
      http: { method: 'GET', path: `/api/v1/namespaces/${ns}/workflows?pageSize=1` },
    },
    {
      name: 'history',
      needs: 'read',
      grpc: { method: `${svc}GetWorkflowExecutionHistory`, message: v1.GetWorkflowExecutionHistoryRequest.encode({ namespace, execution }).finish() },
      http: { method: 'GET', path: `/api/v1/namespaces/${ns}/workflows/${wf}/history` },
    },
    {
      name: 'signal',
      needs: 'signal',
      grpc: {
        method: `${svc}SignalWorkflowExecution`,
        message: v1.SignalWorkflowExecutionRequest.encode({ namespace, workflowExecution: execution, signalName: 'void', requestId }).finish(),
      },
      http: { method: 'POST', path: `/api/v1/namespaces/${ns}/workflows/${wf}/signal/void`, body: {} },
    },
    {
      name: 'terminate',
      needs: 'write',
      grpc: {
        method: `${svc}TerminateWorkflowExecution`,
        message: v1.TerminateWorkflowExecutionRequest.encode({ namespace, workflowExecution: execution, reason: 'doors probe' }).finish(),
      },
      http: { method: 'POST', path: `/api/v1/namespaces/${ns}/workflows/${wf}/terminate`, body: { reason: 'doors probe' } },
    },
    {
      name: 'reset',
      needs: 'write',
      grpc: {
        method: `${svc}ResetWorkflowExecution`,
        message: v1.ResetWorkflowExecutionRequest.encode({
          namespace,
          workflowExecution: execution,
          reason: 'doors probe',
          // protobufjs encodes a number as an int64 (its type names Long).
          workflowTaskFinishEventId: 3 as unknown as proto.temporal.api.workflowservice.v1.IResetWorkflowExecutionRequest['workflowTaskFinishEventId'],
          requestId,
        }).finish(),
      },
      http: {
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/workflows/${wf}/reset`,
        body: { reason: 'doors probe', workflowTaskFinishEventId: '3', requestId },
      },
    },
    {
      name: 'start',
      needs: 'write',
      grpc: {
        method: `${svc}StartWorkflowExecution`,
        message: v1.StartWorkflowExecutionRequest.encode({
          namespace,
          workflowId: wf,
          workflowType: { name: 'doors-probe' },
          taskQueue: { name: 'doors-probe' },
          requestId,
        }).finish(),
      },
      http: {
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/workflows/${wf}`,
        body: { workflowType: { name: 'doors-probe' }, taskQueue: { name: 'doors-probe' }, requestId },
      },
    },
    {
      name: 'update',
      needs: 'write',
      grpc: {
        method: `${svc}UpdateWorkflowExecution`,
        message: v1.UpdateWorkflowExecutionRequest.encode({
          namespace,
          workflowExecution: execution,
          request: { meta: { updateId: 'doors-probe' }, input: { name: 'capture' } },
        }).finish(),
      },
      http: {
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/workflows/${wf}/update/capture`,
        body: { request: { meta: { updateId: 'doors-probe' }, input: { name: 'capture' } } },
      },
    },
    {
      name: 'poll workflow task',
      needs: 'write',
      grpc: {
        method: `${svc}PollWorkflowTaskQueue`,
        message: v1.PollWorkflowTaskQueueRequest.encode({ namespace, taskQueue: { name: 'doors-probe' } }).finish(),
      },
    },
    {
      name: 'poll activity task',
      needs: 'write',
      grpc: {
        method: `${svc}PollActivityTaskQueue`,
        message: v1.PollActivityTaskQueueRequest.encode({ namespace, taskQueue: { name: 'doors-probe' } }).finish(),
      },
    },
    {
      name: 'delete namespace',
      needs: 'admin',
      grpc: {
        method: '/temporal.api.operatorservice.v1.OperatorService/DeleteNamespace',
        message: temporal.api.operatorservice.v1.DeleteNamespaceRequest.encode({ namespace: `doors-no-such-${process.pid}` }).finish(),
      },
    },
  ];
}
