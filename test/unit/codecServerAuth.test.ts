// Production: the Temporal UI with OIDC and `codec.passAccessToken: true` sends the operator's access
// token (`Authorization: Bearer <JWT>`) to the codec endpoint. The codec server decodes only for a
// token it verifies: signature (a JWKS or a shared HMAC secret), expiry, issuer and audience.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWTPayload } from 'jose';
import { EncryptionCodec, parseCodecKeys } from '../../runtime/codec.js';
import { codecAuthFromEnv, jwtBearerVerifier, startCodecServer, type CodecServer } from '../../runtime/codecServer.js';

const codec = new EncryptionCodec(parseCodecKeys(`k1:${randomBytes(32).toString('base64')}`));
const issuer = 'https://idp.example.test/';
const audience = 'temporal-codec';
const secret = randomBytes(32).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

async function sealed(value: unknown) {
  const [p] = await codec.encode([{ metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode(JSON.stringify(value)) }]);
  return {
    metadata: Object.fromEntries(Object.entries(p!.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    data: Buffer.from(p!.data!).toString('base64'),
  };
}

async function decodeWith(server: CodecServer, authorization?: string, path = '/decode') {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ payloads: [await sealed({ card: 'clear' })] }),
  });
  const body = (await res.json()) as { payloads?: { data: string }[] };
  return { status: res.status, clear: body.payloads ? JSON.parse(Buffer.from(body.payloads[0]!.data, 'base64').toString()) : undefined };
}

const claims = (extra: JWTPayload = {}): JWTPayload => ({ sub: 'operator@example.test', iat: now(), exp: now() + 300, ...extra });

describe('codec server with an HMAC-signed access token', () => {
  let server: CodecServer;
  const sign = (payload: JWTPayload, key = secret, alg = 'HS256') =>
    new SignJWT({ iss: issuer, aud: audience, ...payload }).setProtectedHeader({ alg }).sign(new TextEncoder().encode(key));
  beforeAll(async () => {
    server = await startCodecServer({ port: 0, codec, allowedOrigins: [], verifyBearer: jwtBearerVerifier({ secret, issuer, audience }) });
  });
  afterAll(() => server?.close());

  it('decodes for a valid token', async () => {
    expect(await decodeWith(server, `Bearer ${await sign(claims())}`)).toEqual({ status: 200, clear: { card: 'clear' } });
  });

  it('refuses (401) expired, not yet valid, wrongly signed, foreign, tokenless and unsigned requests', async () => {
    const refused = [
      await sign(claims({ exp: now() - 60 })),
      await sign(claims({ nbf: now() + 600 })),
      await sign(claims(), randomBytes(32).toString('base64url')),
      await sign(claims({ aud: 'another-service' })),
      await sign(claims({ iss: 'https://evil.example.test/' })),
      await sign({ sub: 'no expiry', iat: now() }),
      `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ ...claims(), iss: issuer, aud: audience })).toString('base64url')}.`,
      'not-a-jwt',
    ];
    for (const token of refused) expect((await decodeWith(server, `Bearer ${token}`)).status, token.slice(0, 40)).toBe(401);
    expect((await decodeWith(server)).status).toBe(401);
    expect((await decodeWith(server, `Basic ${Buffer.from('a:b').toString('base64')}`)).status).toBe(401);
  });
});

describe("codec server with a JWKS (the identity provider's keys)", () => {
  let server: CodecServer;
  let jwks: Server;
  let privateKey: CryptoKey;
  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', () => resolve()));
    const address = jwks.address() as { port: number };
    server = await startCodecServer({
      port: 0,
      codec,
      allowedOrigins: [],
      token: randomBytes(24).toString('base64url'),
      verifyBearer: jwtBearerVerifier({ jwksUrl: `http://127.0.0.1:${address.port}/jwks.json`, issuer, audience }),
    });
  });
  afterAll(async () => {
    await server?.close();
    jwks?.closeAllConnections();
    jwks?.close();
  });
  const sign = async (payload: JWTPayload, key: CryptoKey = privateKey) =>
    new SignJWT({ iss: issuer, aud: audience, ...payload }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(key);

  it('decodes for a token the IdP signed, refuses an expired one and one signed by another key', async () => {
    expect(await decodeWith(server, `Bearer ${await sign(claims())}`)).toEqual({ status: 200, clear: { card: 'clear' } });
    expect((await decodeWith(server, `Bearer ${await sign(claims({ exp: now() - 60 }))}`)).status).toBe(401);
    const other = await generateKeyPair('ES256');
    expect((await decodeWith(server, `Bearer ${await sign(claims(), other.privateKey)}`)).status).toBe(401);
  });

  it('a valid path token does not rescue a bad bearer: every credential presented must hold', async () => {
    const token = randomBytes(24).toString('base64url');
    const both = await startCodecServer({ port: 0, codec, allowedOrigins: [], token, verifyBearer: async () => false });
    try {
      expect((await decodeWith(both, 'Bearer wrong', `/${token}/decode`)).status).toBe(401);
      expect((await decodeWith(both, undefined, `/${token}/decode`)).status).toBe(200);
      expect((await decodeWith(both, `Bearer ${token}`)).status).toBe(200);
    } finally {
      await both.close();
    }
  });
});

describe('codecAuthFromEnv', () => {
  it('refuses a configuration that lets anyone in or that cannot check anything', () => {
    expect(() => codecAuthFromEnv({})).toThrow(/AUTHCAP_CODEC_TOKEN/);
    expect(() => codecAuthFromEnv({ AUTHCAP_CODEC_TOKEN: 'short' })).toThrow(/16/);
    expect(() => codecAuthFromEnv({ AUTHCAP_CODEC_JWT_SECRET: secret })).toThrow(/issuer and an audience/);
    expect(() => codecAuthFromEnv({ AUTHCAP_CODEC_JWT_SECRET: 'too short', AUTHCAP_CODEC_JWT_ISSUER: issuer, AUTHCAP_CODEC_JWT_AUDIENCE: audience })).toThrow(
      /32 bytes/,
    );
    const auth = codecAuthFromEnv({
      AUTHCAP_CODEC_JWKS_URL: 'https://idp.example.test/jwks',
      AUTHCAP_CODEC_JWT_ISSUER: issuer,
      AUTHCAP_CODEC_JWT_AUDIENCE: audience,
    });
    expect(auth.verifyBearer).toBeTypeOf('function');
    expect(auth.token).toBeUndefined();
  });
});
