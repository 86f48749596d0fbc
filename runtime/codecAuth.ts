// Who may use the production codec server (`npm run codec-server`): the shared token, and the Temporal
// UI's OIDC access tokens. Every verified token may decode (display only); only one that lists the
// operator role may encode, because encoding seals an input as an operator's (it can void an
// authorization), and an identity provider issues tokens for the UI's audience to more people than
// those who may do that.
import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { CodecServerOptions, VerifiedBearer } from './codecServer.js';
import type { Settings } from './settings/catalog.js';
import { defaultOf } from './settings/read.js';

export interface JwtVerifierOptions {
  /** The identity provider's JWKS (RS256, PS256, ES256, EdDSA keys); or: */
  jwksUrl?: string;
  /** A shared HMAC secret (HS256/384/512), at least 32 bytes. */
  secret?: string;
  issuer: string;
  /** What the token must be issued for (the API / client id your IdP puts in `aud`). */
  audience: string;
  /** The claim listing the token's roles (AUTHCAP_CODEC_JWT_OPERATOR_CLAIM's default: `roles`). */
  operatorClaim?: string;
  /** The role that may encode (AUTHCAP_CODEC_JWT_OPERATOR_ROLE's default: `authcap-operator`). */
  operatorRole?: string;
}

/** A token that passed every check: its claims, and whether it lists the operator role. */
export interface VerifiedJwt extends VerifiedBearer {
  claims: JWTPayload;
}

/**
 * The claim called `name`, else the dotted path `name` (Keycloak's `realm_access.roles`). The whole
 * name first: Auth0's custom claims are URLs, dots and all. Own properties only, so `constructor` or
 * `__proto__` never reach anything a token did not carry.
 */
export function claimAt(claims: JWTPayload, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  let value: unknown = claims;
  for (const key of name.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Whether a roles claim (an array of strings, or one space-separated string as in OAuth's `scope`) lists `role`. */
export function listsRole(value: unknown, role: string): boolean {
  const roles: unknown[] = typeof value === 'string' ? value.split(/\s+/) : Array.isArray(value) ? value : [];
  return roles.some((r) => r === role);
}

/**
 * Checks the access token the Temporal UI sends with `codec.passAccessToken: true`: signature,
 * `exp` (required), `nbf`, issuer and audience. Anything else, or an error fetching keys, is
 * undefined (not authenticated); a good token gives its claims and whether it is an operator's.
 */
export function jwtBearerVerifier(options: JwtVerifierOptions): (bearer: string) => Promise<VerifiedJwt | undefined> {
  if (Boolean(options.jwksUrl) === Boolean(options.secret)) throw new Error('codec server: give exactly one of jwksUrl and secret');
  if (!options.issuer || !options.audience) throw new Error('codec server: a JWT verifier needs an issuer and an audience');
  if (options.secret !== undefined && Buffer.byteLength(options.secret) < 32) throw new Error('codec server: the JWT secret must be at least 32 bytes');
  // The catalog's defaults, so an embedder that names neither gets the same rule as the server.
  const claim = options.operatorClaim ?? defaultOf('AUTHCAP_CODEC_JWT_OPERATOR_CLAIM');
  const role = options.operatorRole ?? defaultOf('AUTHCAP_CODEC_JWT_OPERATOR_ROLE');
  if (!claim || !role) throw new Error('codec server: the operator claim and role must not be empty');
  const key: Uint8Array | JWTVerifyGetKey =
    options.secret !== undefined ? new TextEncoder().encode(options.secret) : createRemoteJWKSet(new URL(options.jwksUrl!), { timeoutDuration: 5_000 });
  const algorithms = options.secret !== undefined ? ['HS256', 'HS384', 'HS512'] : ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'];
  return async (bearer) => {
    try {
      const { payload } = await jwtVerify(bearer, key as JWTVerifyGetKey, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms,
        requiredClaims: ['exp'],
        clockTolerance: 5,
      });
      return { claims: payload, operator: listsRole(claimAt(payload, claim), role) };
    } catch {
      return undefined;
    }
  };
}

/** The codec server's settings its credential check is made of (readSettings('codec-server') has them). */
export type CodecAuthSettings = Pick<
  Settings<'codec-server'>,
  | 'AUTHCAP_CODEC_TOKEN'
  | 'AUTHCAP_CODEC_JWKS_URL'
  | 'AUTHCAP_CODEC_JWT_SECRET'
  | 'AUTHCAP_CODEC_JWT_ISSUER'
  | 'AUTHCAP_CODEC_JWT_AUDIENCE'
  | 'AUTHCAP_CODEC_JWT_OPERATOR_CLAIM'
  | 'AUTHCAP_CODEC_JWT_OPERATOR_ROLE'
>;

/**
 * The production settings: AUTHCAP_CODEC_TOKEN (a shared bearer, for the CLI), and/or the UI's
 * access tokens: AUTHCAP_CODEC_JWT_ISSUER + AUTHCAP_CODEC_JWT_AUDIENCE with AUTHCAP_CODEC_JWKS_URL
 * or AUTHCAP_CODEC_JWT_SECRET, and the operator role (AUTHCAP_CODEC_JWT_OPERATOR_CLAIM and _ROLE).
 * Refuses a configuration that would let anyone in.
 */
export function codecAuthOf(settings: CodecAuthSettings): Pick<CodecServerOptions, 'token' | 'verifyBearer'> {
  // At least 16 characters when set (runtime/settings/catalog.ts checked it).
  const token = settings.AUTHCAP_CODEC_TOKEN;
  const jwt = settings.AUTHCAP_CODEC_JWKS_URL || settings.AUTHCAP_CODEC_JWT_SECRET;
  const verifyBearer = jwt
    ? jwtBearerVerifier({
        jwksUrl: settings.AUTHCAP_CODEC_JWKS_URL || undefined,
        secret: settings.AUTHCAP_CODEC_JWT_SECRET || undefined,
        issuer: settings.AUTHCAP_CODEC_JWT_ISSUER ?? '',
        audience: settings.AUTHCAP_CODEC_JWT_AUDIENCE ?? '',
        operatorClaim: settings.AUTHCAP_CODEC_JWT_OPERATOR_CLAIM,
        operatorRole: settings.AUTHCAP_CODEC_JWT_OPERATOR_ROLE,
      })
    : undefined;
  if (!token && !verifyBearer) throw new Error('codec server: set AUTHCAP_CODEC_TOKEN or AUTHCAP_CODEC_JWKS_URL / AUTHCAP_CODEC_JWT_SECRET');
  return { token, verifyBearer };
}
