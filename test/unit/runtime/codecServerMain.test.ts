// The production codec server entry point (`npm run codec-server`): it refuses to start without a
// credential check, and with one decodes only for a request that carries it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../devstack/process.js';

const keys = `k1:${randomBytes(32).toString('base64')}`;
const tsx = ['--import', 'tsx', 'runtime/codecServerMain.ts'];

function start(env: Record<string, string>) {
  const child = spawn(process.execPath, tsx, { env: { ...process.env, AUTHCAP_CODEC_KEYS: keys, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

describe('npm run codec-server', () => {
  it('will not start without a token or a JWT verifier', async () => {
    const { exited, output } = start({
      AUTHCAP_CODEC_TOKEN: '',
      AUTHCAP_CODEC_JWKS_URL: '',
      AUTHCAP_CODEC_JWT_SECRET: '',
      AUTHCAP_CODEC_PORT: String(await freePort()),
    });
    expect(await exited).not.toBe(0);
    expect(output()).toMatch(/AUTHCAP_CODEC_TOKEN/);
  }, 30_000);

  it('decodes for the bearer of its token, and answers 401 to anyone else', async () => {
    const port = await freePort();
    const token = randomBytes(24).toString('hex');
    const server = start({ AUTHCAP_CODEC_TOKEN: token, AUTHCAP_CODEC_PORT: String(port) });
    try {
      const decode = async (headers: Record<string, string>) => {
        for (let i = 0; i < 100; i += 1) {
          try {
            return await fetch(`http://127.0.0.1:${port}/decode`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', ...headers },
              body: '{"payloads":[]}',
            });
          } catch {
            await new Promise((r) => setTimeout(r, 100));
          }
        }
        throw new Error(`codec server did not start: ${server.output()}`);
      };
      expect((await decode({})).status).toBe(401);
      expect((await decode({ authorization: 'Bearer wrong-token-wrong-token' })).status).toBe(401);
      const ok = await decode({ authorization: `Bearer ${token}` });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ payloads: [] });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 30_000);
});
