// Production: the Temporal UI with OIDC and `codec.passAccessToken: true` sends the operator's access
// token (`Authorization: Bearer <JWT>`) to the codec endpoint. The codec server decodes only for a
// token it verifies: signature (a JWKS or a shared HMAC secret), expiry, issuer and audience; it
// encodes (seals an operator's input) only for a token that also lists the operator role.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Payload } from '@temporalio/common';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWTPayload } from 'jose';
import { EncryptionCodec, parseCodecKeys } from '../../../runtime/codec.js';
import { codecAuthOf, jwtBearerVerifier } from '../../../runtime/codecAuth.js';
import { readSettings } from '../../../runtime/settings/read.js';

/** As the codec server's entry makes it: its settings read from `env`, then the check. */
const codecAuthFromEnv = (env: Record<string, string>) => codecAuthOf(readSettings('codec-server', env));
import { startCodecServer, type CodecServer } from '../../../runtime/codecServer.js';

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

/** POST /encode of one clear payload: the status, the body, and what the sealed payload opens to. */
async function encodeWith(server: CodecServer, authorization: string) {
  const clear = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"void"').toString('base64') };
  const res = await fetch(`${server.url}/encode`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ payloads: [clear] }),
  });
  const body = (await res.json()) as { payloads?: { metadata: Record<string, string>; data: string }[]; error?: unknown };
  const sealed = body.payloads?.[0];
  const opened = sealed
    ? await codec.openForDisplay([
        {
          metadata: Object.fromEntries(Object.entries(sealed.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
          data: Buffer.from(sealed.data, 'base64'),
        },
      ])
    : undefined;
  return { status: res.status, body, opened: opened && Buffer.from(opened[0]!.data!).toString() };
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
    const both = await startCodecServer({ port: 0, codec, allowedOrigins: [], token, verifyBearer: async () => undefined });
    try {
      expect((await decodeWith(both, 'Bearer wrong', `/${token}/decode`)).status).toBe(401);
      expect((await decodeWith(both, undefined, `/${token}/decode`)).status).toBe(200);
      expect((await decodeWith(both, `Bearer ${token}`)).status).toBe(200);
    } finally {
      await both.close();
    }
  });
});

describe('the operator role: /decode for any verified token, /encode only for an operator', () => {
  const token = randomBytes(24).toString('base64url');
  const sign = (payload: JWTPayload) =>
    new SignJWT({ iss: issuer, aud: audience, ...payload }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));
  let sealCalls = 0;
  // The real codec, counting what /encode asks it to seal: a refused caller must seal nothing.
  const counting = {
    openForDisplay: codec.openForDisplay.bind(codec),
    sealForOperator: (payloads: Payload[]) => {
      sealCalls += 1;
      return codec.sealForOperator(payloads);
    },
  };
  const servers: CodecServer[] = [];
  const start = async (verifier: Parameters<typeof jwtBearerVerifier>[0]) => {
    const server = await startCodecServer({ port: 0, codec: counting, allowedOrigins: [], token, verifyBearer: jwtBearerVerifier(verifier) });
    servers.push(server);
    return server;
  };
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  it('a token without the role decodes (200) but gets 403 "forbidden" on /encode, and nothing is sealed', async () => {
    const server = await start({ secret, issuer, audience });
    const lacking = [claims(), claims({ roles: ['reader'] }), claims({ roles: 'reader authcap-operators' }), claims({ roles: { 'authcap-operator': true } })];
    for (const payload of lacking) {
      const bearer = `Bearer ${await sign(payload)}`;
      const encoded = await encodeWith(server, bearer);
      expect(encoded.status, JSON.stringify(payload.roles)).toBe(403);
      expect(encoded.body).toEqual({ error: 'forbidden', message: expect.stringMatching(/operator role/) });
      expect(await decodeWith(server, bearer)).toEqual({ status: 200, clear: { card: 'clear' } });
    }
    expect(sealCalls).toBe(0);
  });

  it('a token listing the role (an array, or a space-separated string) encodes: the input comes back sealed under the payload key', async () => {
    const server = await start({ secret, issuer, audience });
    for (const roles of [['reader', 'authcap-operator'], 'reader authcap-operator']) {
      const encoded = await encodeWith(server, `Bearer ${await sign(claims({ roles }))}`);
      expect(encoded.status, String(roles)).toBe(200);
      expect(encoded.opened).toBe('"void"');
    }
  });

  it("the shared token (the operator CLI's secret) encodes where a token without the role may not", async () => {
    const server = await start({ secret, issuer, audience });
    expect((await encodeWith(server, `Bearer ${token}`)).status).toBe(200);
    expect((await encodeWith(server, `Bearer ${await sign(claims())}`)).status).toBe(403);
  });

  it('reads the role from a dotted path (Keycloak) or a claim named with dots (Auth0), under a configured role name', async () => {
    const server = await start({ secret, issuer, audience, operatorClaim: 'realm_access.roles', operatorRole: 'voider' });
    expect((await encodeWith(server, `Bearer ${await sign(claims({ realm_access: { roles: ['voider'] } }))}`)).status).toBe(200);
    expect((await encodeWith(server, `Bearer ${await sign(claims({ 'realm_access.roles': 'voider' }))}`)).status).toBe(200);
    expect((await encodeWith(server, `Bearer ${await sign(claims({ realm_access: { roles: ['authcap-operator'] } }))}`)).status).toBe(403);
    expect((await encodeWith(server, `Bearer ${await sign(claims({ roles: ['voider'] }))}`)).status).toBe(403);
  });

  it('the verifier gives the verified claims, and nothing for a token that fails a check', async () => {
    const verify = jwtBearerVerifier({ secret, issuer, audience });
    expect(await verify(await sign(claims({ roles: ['authcap-operator'] })))).toEqual({
      claims: expect.objectContaining({ sub: 'operator@example.test' }),
      operator: true,
    });
    expect(await verify(await sign(claims({ exp: now() - 60, roles: ['authcap-operator'] })))).toBeUndefined();
  });
});

describe("codecAuthOf the codec server's settings", () => {
  it('takes the operator claim and role from AUTHCAP_CODEC_JWT_OPERATOR_CLAIM and _ROLE, and refuses a role with spaces', async () => {
    const env = { AUTHCAP_CODEC_JWT_SECRET: secret, AUTHCAP_CODEC_JWT_ISSUER: issuer, AUTHCAP_CODEC_JWT_AUDIENCE: audience };
    const sign = (payload: JWTPayload) =>
      new SignJWT({ iss: issuer, aud: audience, ...payload }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));
    const byDefault = codecAuthFromEnv(env).verifyBearer!;
    expect((await byDefault(await sign(claims({ roles: 'authcap-operator' }))))?.operator).toBe(true);
    const custom = codecAuthFromEnv({ ...env, AUTHCAP_CODEC_JWT_OPERATOR_CLAIM: 'groups', AUTHCAP_CODEC_JWT_OPERATOR_ROLE: 'payments-ops' }).verifyBearer!;
    expect((await custom(await sign(claims({ groups: ['payments-ops'] }))))?.operator).toBe(true);
    expect((await custom(await sign(claims({ roles: ['authcap-operator'] }))))?.operator).toBe(false);
    expect(() => codecAuthFromEnv({ ...env, AUTHCAP_CODEC_JWT_OPERATOR_ROLE: 'two words' })).toThrow(/AUTHCAP_CODEC_JWT_OPERATOR_ROLE must be one word/);
  });

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
