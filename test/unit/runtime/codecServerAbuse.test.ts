// The codec server runs inside the `npm start` supervisor: an aborted, slow, malformed or huge
// request must cost one refused request, never the process. The server runs in a child process here
// so that a crash shows up as a dead child rather than as a vitest error somewhere else.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EncryptionCodec, parseCodecKeys } from '../../../runtime/codec.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const keys = `k1:${randomBytes(32).toString('base64')}`;
const token = randomBytes(24).toString('base64url');
const codec = new EncryptionCodec(parseCodecKeys(keys));

const serverScript = `
import { startCodecServer } from './runtime/codecServer.ts';
import { EncryptionCodec, parseCodecKeys } from './runtime/codec.ts';
const server = await startCodecServer({
  port: 0, token: process.env.TOKEN, allowedOrigins: [], codec: new EncryptionCodec(parseCodecKeys(process.env.KEYS)),
  requestTimeoutMs: 2000, headersTimeoutMs: 1000,
});
console.log('URL ' + server.url);
`;

let child: ChildProcess;
let url: string;
let output = '';

beforeAll(async () => {
  child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', serverScript], {
    cwd: root,
    env: { ...process.env, TOKEN: token, KEYS: keys },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /URL (http:\/\/\S+)/.exec(output);
      if (found) resolve(found[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`codec server exited (${code}): ${output}`)));
  });
});

afterAll(() => {
  child?.kill('SIGKILL');
});

const wire = async (value: unknown) => {
  const [p] = await codec.encode([{ metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode(JSON.stringify(value)) }]);
  return {
    metadata: Object.fromEntries(Object.entries(p!.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    data: Buffer.from(p!.data!).toString('base64'),
  };
};

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body });

/** The server is alive and still decodes a proper request. */
async function expectStillDecodes(): Promise<void> {
  expect(child.exitCode, output).toBeNull();
  expect(child.signalCode).toBeNull();
  const res = await post('/decode', JSON.stringify({ payloads: [await wire({ secret: 'still here' })] }));
  expect(res.status).toBe(200);
  const { payloads } = (await res.json()) as { payloads: { data: string }[] };
  expect(JSON.parse(Buffer.from(payloads[0]!.data, 'base64').toString())).toEqual({ secret: 'still here' });
}

function rawSocket(): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Resolves with how long the server took to close the socket, or rejects after `withinMs`. */
function closedWithin(socket: Socket, withinMs: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server kept the socket open for ${withinMs} ms`)), withinMs);
    socket.on('data', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
    socket.on('error', () => undefined);
  });
}

describe('the codec server under abuse', () => {
  it('survives a body cut off mid-way: Content-Length 1000, 6 bytes sent, then a reset', async () => {
    for (const path of [`/${token}/decode`, '/decode']) {
      const socket = await rawSocket();
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"pay`,
      );
      await new Promise((r) => setTimeout(r, 100));
      socket.resetAndDestroy();
    }
    await new Promise((r) => setTimeout(r, 300));
    await expectStillDecodes();
  });

  it('closes a slow-loris connection (headers never finish) within its headers timeout', async () => {
    const socket = await rawSocket();
    socket.write('POST /decode HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const drip = setInterval(() => socket.writable && socket.write('X-Drip: a\r\n'), 200);
    try {
      expect(await closedWithin(socket, 5_000)).toBeLessThan(5_000);
    } finally {
      clearInterval(drip);
    }
    await expectStillDecodes();
  });

  it('closes a connection whose body trickles in within its request timeout', async () => {
    const socket = await rawSocket();
    socket.write(
      `POST /decode HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
    );
    const drip = setInterval(() => socket.writable && socket.write(' '), 200);
    try {
      expect(await closedWithin(socket, 6_000)).toBeLessThan(6_000);
    } finally {
      clearInterval(drip);
    }
    await expectStillDecodes();
  });

  it('closes a connection that never sends a byte', async () => {
    const socket = await rawSocket();
    expect(await closedWithin(socket, 8_000)).toBeLessThan(8_000);
  });

  it('answers malformed requests with a 4xx, and then a proper one with 200', async () => {
    expect((await post('/decode', '{"payloads": [')).status).toBe(400);
    expect((await post('/decode', 'null')).status).toBe(400);
    expect((await post('/decode', '[]')).status).toBe(400);
    expect((await post('/decode', '{"payloads": {}}')).status).toBe(400);
    expect((await post('/decode', '{"payloads": [null]}')).status).toBe(400);
    expect((await post('/decode', '{"payloads": [{"data": 5}]}')).status).toBe(400);
    expect((await post('/decode', '{"payloads": [{"metadata": {"encoding": "%%%"}}]}')).status).toBe(400);
    expect((await post('/decode', '{"payloads": [{"metadata": {"encoding": "YmluYXJ5L2VuY3J5cHRlZA=="}, "data": "AAAA"}]}')).status).toBe(400);
    expect((await post('/decode', '{}', { 'content-type': 'text/plain' })).status).toBe(415);
    const socket = await rawSocket();
    socket.write('GARBAGE / HTTP/9.9\r\n\r\n');
    await closedWithin(socket, 3_000);
    await expectStillDecodes();
  });

  it('refuses huge bodies: by Content-Length at once, and streamed past 4 MiB', async () => {
    const declared = await rawSocket();
    const answer = new Promise<string>((resolve) => declared.once('data', (d) => resolve(d.toString())));
    declared.write(
      `POST /decode HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n`,
    );
    expect(await answer).toMatch(/^HTTP\/1\.1 413/);
    declared.destroy();
    const streamed = await post('/decode', `{"payloads": [{"data": "${'A'.repeat(5 * 1024 * 1024)}"}]}`, { 'transfer-encoding': 'chunked' }).catch(
      (err: Error) => err,
    );
    // Either the 413 arrives, or the server closed the socket under a sender that kept on writing.
    if (!(streamed instanceof Error)) expect(streamed.status).toBe(413);
    await expectStillDecodes();
  });

  it('answers {} and {"payloads":[]} (what `temporal workflow query --codec-endpoint` sends) with no payloads', async () => {
    for (const body of ['{}', '{"payloads":[]}']) {
      for (const path of ['/decode', '/encode']) {
        const res = await post(path, body);
        expect(res.status, `${path} ${body}`).toBe(200);
        expect(await res.json()).toEqual({ payloads: [] });
      }
    }
  });
});
