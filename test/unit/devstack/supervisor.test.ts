// The `npm start` supervisor as a real process: the same pieces devstack/main.ts composes (the safety
// net, supervise(), managed child processes, the in-process codec server), with two idle node
// processes standing in for Temporal and the worker. It must survive an aborted codec request and
// every kind of stray error; when a child dies it stops the rest and exits 1; a signal stops all, exit 0.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { EncryptionCodec, parseCodecKeys } from '../../../runtime/codec.js';
import { startProcess } from '../../../devstack/process.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const keys = `k1:${randomBytes(32).toString('base64')}`;
const token = randomBytes(24).toString('base64url');

const fixture = `
import { installSafetyNet, supervise } from './devstack/supervisor.ts';
import { startProcess } from './devstack/process.ts';
import { startCodecServer } from './runtime/codecServer.ts';
import { EncryptionCodec, parseCodecKeys } from './runtime/codec.ts';
installSafetyNet();
const idle = (name) => startProcess({ name, command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], ready: () => new Promise((r) => setTimeout(r, 200)) });
const a = await idle('alpha');
const b = await idle('beta');
const codec = await startCodecServer({ port: 0, token: process.env.TOKEN, allowedOrigins: [], codec: new EncryptionCodec(parseCodecKeys(process.env.KEYS)), onError: (e) => console.error('codec server error: ' + e.message) });
const supervisor = supervise({ stop: async () => { await codec.close(); await a.stop(); await b.stop(); } });
supervisor.watch(a);
supervisor.watch(b);
process.on('SIGUSR2', () => {
  a.child.emit('error', new Error('injected child error'));
  a.child.emit('error', new Error('injected second child error'));
  a.child.stdout.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
  b.child.stderr.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
  codec.server.emit('error', new Error('injected server error'));
  setTimeout(() => { throw new Error('injected stray throw'); });
  void Promise.reject(new Error('injected stray rejection'));
  setTimeout(() => console.log('INJECTED'), 100);
});
console.log('READY ' + JSON.stringify({ url: codec.url, pids: [a.child.pid, b.child.pid] }));
`;

interface Supervisor {
  proc: ChildProcess;
  url: string;
  pids: [number, number];
  output: () => string;
  exited: Promise<number | null>;
}

const started: Supervisor[] = [];

/** `detached`: its own process group, as `npm start` has in a terminal (Ctrl-C signals the whole group). */
async function startSupervisor(detached = false): Promise<Supervisor> {
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', fixture], {
    cwd: root,
    env: { ...process.env, TOKEN: token, KEYS: keys },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const ready = await new Promise<{ url: string; pids: [number, number] }>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const line = /READY (\{.*\})/.exec(output);
      if (line) resolve(JSON.parse(line[1]!));
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`supervisor exited (${code}) before it was ready: ${output}`)));
  });
  const supervisor = { proc, ...ready, output: () => output, exited };
  started.push(supervisor);
  return supervisor;
}

afterEach(() => {
  for (const s of started.splice(0)) {
    for (const pid of s.pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    s.proc.kill('SIGKILL');
  }
});

/** Running, not a zombie. */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] !== 'Z';
  } catch {
    return false;
  }
}

async function decodes(url: string): Promise<number> {
  const codec = new EncryptionCodec(parseCodecKeys(keys));
  const [p] = await codec.encode([{ metadata: {}, data: new TextEncoder().encode('"x"') }]);
  const payload = {
    metadata: Object.fromEntries(Object.entries(p!.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    data: Buffer.from(p!.data!).toString('base64'),
  };
  const res = await fetch(`${url}/decode`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ payloads: [payload] }),
  });
  return res.status;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe.runIf(process.platform === 'linux')('the dev stack supervisor', () => {
  it('survives an aborted codec request and stray errors of every kind, and keeps its children', async () => {
    const s = await startSupervisor();
    const { hostname, port } = new URL(s.url);
    const socket = connect(Number(port), hostname);
    await new Promise((r) => socket.once('connect', r));
    socket.write(`POST /${token}/decode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"pay`);
    await sleep(100);
    socket.resetAndDestroy();
    await sleep(300);
    expect(s.proc.exitCode, s.output()).toBeNull();
    expect(await decodes(s.url)).toBe(200);

    s.proc.kill('SIGUSR2');
    while (!s.output().includes('INJECTED') && s.proc.exitCode === null) await sleep(50);
    await sleep(200);
    expect(s.proc.exitCode, s.output()).toBeNull();
    expect(s.output()).toContain('injected stray throw');
    expect(s.output()).toContain('injected stray rejection');
    expect(s.output()).toContain('codec server error: injected server error');
    for (const pid of s.pids) expect(alive(pid), `child ${pid}`).toBe(true);
    expect(await decodes(s.url)).toBe(200);
  });

  it('when a child dies, stops the others and exits 1, even with its own stdout and stderr gone (EPIPE)', async () => {
    const s = await startSupervisor();
    s.proc.stdout!.destroy();
    s.proc.stderr!.destroy();
    process.kill(s.pids[0], 'SIGKILL');
    const code = await Promise.race([s.exited, sleep(20_000).then(() => 'still running')]);
    expect(code).toBe(1);
    expect(alive(s.pids[1]), 'the other child was left behind').toBe(false);
    await expect(decodes(s.url)).rejects.toThrow();
  });

  it('on SIGTERM stops everything and exits 0', async () => {
    const s = await startSupervisor();
    s.proc.kill('SIGTERM');
    const code = await Promise.race([s.exited, sleep(20_000).then(() => 'still running')]);
    expect(code).toBe(0);
    expect(s.output()).toContain('authcap: stopped.');
    for (const pid of s.pids) expect(alive(pid), `child ${pid}`).toBe(false);
  });
});

describe.runIf(process.platform === 'linux')('Ctrl-C in a terminal', () => {
  it('signals the whole group: the children go down at once, and the supervisor still exits 0, as a stop', async () => {
    const s = await startSupervisor(true);
    process.kill(-s.proc.pid!, 'SIGINT');
    const code = await Promise.race([s.exited, sleep(20_000).then(() => 'still running')]);
    expect(code, s.output()).toBe(0);
    expect(s.output()).not.toContain('exited on its own');
    for (const pid of s.pids) expect(alive(pid), `child ${pid}`).toBe(false);
  });
});

describe('a managed process', () => {
  it('takes errors from its child and its stdio without throwing, and is not taken for dead by them', async () => {
    const proc = await startProcess({ name: 'idle', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], ready: () => sleep(100) });
    try {
      expect(() => {
        proc.child.emit('error', new Error('a failed kill'));
        proc.child.emit('error', new Error('another'));
        proc.child.stdout!.emit('error', Object.assign(new Error('read EPIPE'), { code: 'EPIPE' }));
        proc.child.stderr!.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
      }).not.toThrow();
      const settled = await Promise.race([proc.exited.then(() => 'exited'), sleep(200).then(() => 'running')]);
      expect(settled).toBe('running');
      expect(proc.tail()).toContain('a failed kill');
    } finally {
      await proc.stop();
    }
    expect(await proc.exited).toBeNull();
  });

  it('resolves exited when the command cannot be spawned at all', async () => {
    await expect(
      startProcess({ name: 'missing', command: '/nonexistent/authcap-binary', args: [], ready: () => new Promise<void>(() => undefined) }),
    ).rejects.toThrow(/exited/);
  });
});
