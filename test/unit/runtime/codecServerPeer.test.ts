// The dev stack's codec server without its token: the dev UI publishes the endpoint to every local
// user, so it decodes only for connections whose client socket belongs to this OS user, and from a
// browser only on the dev UI's origin. The other-user case runs a real client as `nobody` (needs root).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { endianness } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EncryptionCodec, parseCodecKeys } from '../../../runtime/codec.js';
import { startCodecServer, type CodecServer } from '../../../runtime/codecServer.js';
import { procNetAddress, sameLocalUser } from '../../../devstack/localPeer.js';
import { publicCodecEndpoint } from '../../../devstack/temporalServer.js';

const linux = process.platform === 'linux';
const uiOrigin = 'http://127.0.0.1:8233';
const codec = new EncryptionCodec(parseCodecKeys(`k1:${randomBytes(32).toString('base64')}`));
let server: CodecServer;
let body: string;

beforeAll(async () => {
  server = await startCodecServer({
    port: 0,
    codec,
    token: randomBytes(24).toString('base64url'),
    allowedOrigins: [uiOrigin],
    trustRequest: sameLocalUser([uiOrigin]),
  });
  const [p] = await codec.encode([{ metadata: {}, data: new TextEncoder().encode('"clear"') }]);
  body = JSON.stringify({
    payloads: [
      {
        metadata: Object.fromEntries(Object.entries(p!.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
        data: Buffer.from(p!.data!).toString('base64'),
      },
    ],
  });
});
afterAll(() => server?.close());

/** A raw request, so that Host and Origin are exactly what a browser or an attacker would send. */
function decode(headers: Record<string, string>): Promise<number> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/decode', headers: { 'content-type': 'application/json', host: `127.0.0.1:${port}`, ...headers } },
      (res) => {
        res.resume();
        resolve(res.statusCode!);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe("the Web UI's codec endpoint (public: the process list, GET /api/v1/settings)", () => {
  it('is a bare origin: anything that could carry a secret is refused', () => {
    expect(publicCodecEndpoint('http://127.0.0.1:4567')).toBe('http://127.0.0.1:4567');
    expect(publicCodecEndpoint('http://127.0.0.1:4567/')).toBe('http://127.0.0.1:4567');
    for (const leaky of [
      'http://127.0.0.1:4567/s3cr3tT0kenValue1234',
      'http://127.0.0.1:4567/?token=x',
      'http://me:pw@127.0.0.1:4567',
      'http://127.0.0.1:4567/#x',
    ]) {
      expect(() => publicCodecEndpoint(leaky), leaky).toThrow(/bare origin/);
    }
  });
});

describe('procNetAddress', () => {
  it('prints addresses the way /proc/net/tcp does', () => {
    const le = endianness() === 'LE';
    expect(procNetAddress('127.0.0.1', 8080)).toBe(le ? '0100007F:1F90' : '7F000001:1F90');
    expect(procNetAddress('::1', 443)).toBe(le ? '00000000000000000000000001000000:01BB' : '00000000000000000000000000000001:01BB');
    expect(procNetAddress('::ffff:127.0.0.1', 1)).toBe(le ? '0000000000000000FFFF00000100007F:0001' : '00000000000000000000FFFF7F000001:0001');
    expect(procNetAddress('not an address', 1)).toBeUndefined();
  });
});

describe.runIf(linux)('the codec server trusting the same local user (Linux)', () => {
  it('decodes for this user: a program (no Origin) and a browser on the dev UI', async () => {
    expect(await decode({})).toBe(200);
    expect(await decode({ origin: uiOrigin })).toBe(200);
  });

  it('refuses pages elsewhere, DNS rebinding, and a wrong credential even from this user', async () => {
    expect(await decode({ origin: 'http://127.0.0.1:9999' })).toBe(401);
    expect(await decode({ origin: 'http://localhost:8233' })).toBe(401);
    expect(await decode({ origin: 'null' })).toBe(401);
    expect(await decode({ host: `rebound.example.test:${new URL(server.url).port}` })).toBe(401);
    expect(await decode({ authorization: 'Bearer wrong' })).toBe(401);
  });

  it.runIf(process.getuid?.() === 0)('refuses another OS user (a real client running as nobody)', async () => {
    const script = `
      const res = await fetch(${JSON.stringify(`${server.url}/decode`)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(body)} });
      console.log('STATUS ' + res.status);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { uid: 65534, gid: 65534, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    await new Promise((resolve) => child.once('exit', resolve));
    expect(out).toMatch(/STATUS 401/);
    // And the same request from this user is decoded: it is the user that differs, nothing else.
    expect(await decode({})).toBe(200);
  });
});
