// The payload codec on its own: AES-256-GCM with a fresh IV per payload, key ids for rotation; a
// payload it cannot open as sealed by its keys (plain, tampered, an unknown key) decodes to the
// unsealed marker, never to the data it claims; what the codec server seals is marked an operator's.
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import { EncryptionCodec, ensureDevCodecKeys, parseCodecKeys, requireCodec } from '../../../runtime/codec.js';
import { isOperatorSealed, isUnsealed } from '../../../domain/sealed.js';
import { startCodecServer } from '../../../runtime/codecServer.js';
import { scratchDirs } from '../../support/scratch.js';

const scratch = scratchDirs('codec');

const key = () => randomBytes(32).toString('base64');
const payload = (value: unknown) => defaultPayloadConverter.toPayload(value)!;

describe('EncryptionCodec', () => {
  const keys = `k2:${key()},k1:${key()}`;
  const codec = new EncryptionCodec(parseCodecKeys(keys));

  it('round-trips, seals with a new IV each time, and names the key', async () => {
    const plain = payload({ signature: '0xdeadbeef' });
    const [a] = await codec.encode([plain]);
    const [b] = await codec.encode([plain]);
    expect(Buffer.from(a!.data!).toString('latin1')).not.toContain('deadbeef');
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
    expect(new TextDecoder().decode(a!.metadata!['encryption-key-id'])).toBe('k2');
    const [back] = await codec.decode([a!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toEqual({ signature: '0xdeadbeef' });
  });

  it('after rotation, old payloads still open; one sealed with a key it does not hold is unsealed, never its data', async () => {
    const [old] = await codec.encode([payload('history')]);
    const rotated = new EncryptionCodec(parseCodecKeys(`k3:${key()},${keys}`));
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([old!]))[0]!)).toBe('history');
    const [fresh] = await rotated.encode([payload('new')]);
    expect(new TextDecoder().decode(fresh!.metadata!['encryption-key-id'])).toBe('k3');
    const without = new EncryptionCodec(parseCodecKeys(`k9:${key()}`));
    const [unknown] = await without.decode([old!]);
    expect(defaultPayloadConverter.fromPayload(unknown!)).toEqual({ $authcapSeal: 'unsealed', reason: 'unknown_key' });
  });

  it('detects tampering', async () => {
    const [sealed] = await codec.encode([payload({ amount: '1' })]);
    const data = Buffer.from(sealed!.data!);
    data[20] = data[20]! ^ 1;
    const [opened] = await codec.decode([{ ...sealed!, data }]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual({ $authcapSeal: 'unsealed', reason: 'tampered' });
  });

  it('decodes a plain payload (a client without the key) to the unsealed marker', async () => {
    const [opened] = await codec.decode([payload({ to: '0xbeef', data: '0xa9059cbb' })]);
    const value = defaultPayloadConverter.fromPayload(opened!);
    expect(isUnsealed(value)).toBe(true);
    expect(value).not.toHaveProperty('to');
  });

  it("shows plain payloads as they are for people to read, and marks an operator's seal as theirs", async () => {
    const plain = payload({ reason: 'from the UI' });
    expect(await codec.openForDisplay([plain])).toEqual([plain]);
    const [sealed] = await codec.sealForOperator([plain]);
    expect(new TextDecoder().decode(sealed!.metadata!.encoding)).toBe('binary/encrypted');
    const decoded = defaultPayloadConverter.fromPayload((await codec.decode([sealed!]))[0]!);
    expect(isOperatorSealed(decoded)).toBe(true);
    expect(decoded).toEqual({ $authcapSeal: 'operator', value: { reason: 'from the UI' } });
    const shown = defaultPayloadConverter.fromPayload((await codec.openForDisplay([sealed!]))[0]!);
    expect(shown).toEqual({ reason: 'from the UI' });
  });

  it('refuses to run without keys unless AUTHCAP_CODEC=off, and rejects malformed keys', () => {
    expect(() => requireCodec({})).toThrow(/AUTHCAP_CODEC_KEYS/);
    expect(requireCodec({ AUTHCAP_CODEC: 'off' })).toBeUndefined();
    expect(() => parseCodecKeys('k1:short')).toThrow(/32 bytes/);
    expect(() => parseCodecKeys('nokey')).toThrow(/kid1/);
  });

  it('keeps the dev key in a 0600 file, the same across restarts', () => {
    const dir = scratch();
    const first = ensureDevCodecKeys(dir);
    expect(ensureDevCodecKeys(dir)).toBe(first);
    expect(statSync(join(dir, 'codec-keys.json')).mode & 0o777).toBe(0o600);
  });
});

describe('codec server', () => {
  it('decodes and encodes with the token, 401 without, lets the CORS preflight through', async () => {
    const codec = new EncryptionCodec(parseCodecKeys(`k1:${key()}`));
    const token = randomBytes(24).toString('base64url');
    const server = await startCodecServer({ port: 0, codec, token, allowedOrigins: ['http://127.0.0.1:8233'] });
    try {
      const wire = (p: ReturnType<typeof payload>) => ({
        metadata: Object.fromEntries(Object.entries(p.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
        data: Buffer.from(p.data!).toString('base64'),
      });
      const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
        fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      const encoded = await post('/encode', { payloads: [wire(payload({ secret: 'x' }))] }, { authorization: `Bearer ${token}` });
      expect(encoded.status).toBe(200);
      const { payloads } = (await encoded.json()) as { payloads: unknown[] };
      expect((await post('/decode', { payloads })).status).toBe(401);
      expect((await post('/decode', { payloads }, { authorization: 'Bearer nope' })).status).toBe(401);
      const decoded = await post(`/${token}/decode`, { payloads });
      expect(decoded.status).toBe(200);
      const data = ((await decoded.json()) as { payloads: { data: string }[] }).payloads[0]!.data;
      expect(JSON.parse(Buffer.from(data, 'base64').toString())).toEqual({ secret: 'x' });
      const preflight = await fetch(`${server.url}/decode`, {
        method: 'OPTIONS',
        headers: { origin: 'http://127.0.0.1:8233', 'access-control-request-headers': 'authorization,x-namespace' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8233');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('x-namespace');
    } finally {
      await server.close();
    }
  });
});

describe('EncryptionCodec: a payload opens only where it was sealed for', () => {
  const codec = new EncryptionCodec(parseCodecKeys(`k1:${key()}`));
  const workflowA = { type: 'workflow', namespace: 'default', workflowId: 'authorization-a' } as const;
  const workflowB = { type: 'workflow', namespace: 'default', workflowId: 'authorization-b' } as const;
  const activity = (workflowId: string, activityId: string) => ({ type: 'activity', namespace: 'default', workflowId, activityId, isLocal: false }) as const;
  const open = async (sealed: Parameters<EncryptionCodec['decode']>[0][number], context?: Parameters<EncryptionCodec['decode']>[1]) =>
    defaultPayloadConverter.fromPayload((await codec.decode([sealed], context))[0]!);

  it("opens in its own workflow, and is refused in another's (another workflow id, another namespace)", async () => {
    const [sealed] = await codec.encode([payload({ amount: '0.01' })], workflowA);
    expect(await open(sealed!, workflowA)).toEqual({ amount: '0.01' });
    const elsewhere = await open(sealed!, workflowB);
    expect(isUnsealed(elsewhere) && elsewhere.reason).toBe('misplaced');
    expect(isUnsealed(await open(sealed!, { ...workflowA, namespace: 'other' }))).toBe(true);
  });

  it("an activity's result opens for that activity of that workflow only (not another activity, not its workflow)", async () => {
    const [sealed] = await codec.encode([payload({ status: 'confirmed' })], activity('authorization-a', '7'));
    expect(await open(sealed!, activity('authorization-a', '7'))).toEqual({ status: 'confirmed' });
    expect(isUnsealed(await open(sealed!, activity('authorization-a', '8')))).toBe(true);
    expect(isUnsealed(await open(sealed!, activity('authorization-b', '7')))).toBe(true);
    expect(isUnsealed(await open(sealed!, workflowA))).toBe(true);
  });

  it('the place is sealed with the data: nothing outside the ciphertext names it, and a changed byte does not open', async () => {
    const [sealed] = await codec.encode([payload('x')], workflowA);
    expect(Object.keys(sealed!.metadata!).sort()).toEqual(['encoding', 'encryption-key-id']);
    const data = Buffer.from(sealed!.data!);
    data[20] = data[20]! ^ 1;
    const opened = await open({ ...sealed!, data: new Uint8Array(data) }, workflowA);
    expect(isUnsealed(opened) && opened.reason).toBe('tampered');
  });

  it('ids with separators cannot be made to read as another place', async () => {
    const [sealed] = await codec.encode([payload('x')], activity('a/1', '2'));
    expect(isUnsealed(await open(sealed!, activity('a', '1/2')))).toBe(true);
  });

  it('without a context (a list, a read) a bound payload opens; one sealed for no place is refused where a place is expected', async () => {
    const [bound] = await codec.encode([payload('read')], workflowA);
    expect(await open(bound!)).toBe('read');
    const [unplaced] = await codec.encode([payload('nowhere')]);
    expect(await open(unplaced!)).toBe('nowhere');
    const refused = await open(unplaced!, workflowA);
    expect(isUnsealed(refused) && refused.reason).toBe('unplaced');
  });

  it("an operator's input (the codec server's /encode) is marked an operator's wherever it is sent", async () => {
    const [sealed] = await codec.sealForOperator([payload({ orderId: 'a', reason: 'r' })]);
    expect(isOperatorSealed(await open(sealed!, workflowB))).toBe(true);
  });
});
