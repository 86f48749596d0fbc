// What several processes read (Temporal, codec keys, logs, tracing), and the codec server.
import { nonEmpty, offUnlessOn, port, secretOfAtLeast, text, url, word } from '../rules.js';
import { variable, TEMPORAL_CLIENTS, LOG_LEVELS, logLevel, commaList } from '../variable.js';

export const sharedVariables = {
  // ── Shared by the processes ─────────────────────────────────────────────────────────────────────────
  AUTHCAP_STATE_DIR: variable({
    processes: ['api', 'cli', 'dev-stack'],
    schema: text('.authcap'),
    description: 'Where local state lives: API keys, idempotency answers, the checkout secret, the dev stack.',
  }),
  AUTHCAP_TASK_QUEUE: variable({
    processes: TEMPORAL_CLIENTS,
    schema: nonEmpty('authcap'),
    description: 'The Temporal task queue (the follow queue is derived from it).',
  }),
  AUTHCAP_CODEC_KEYS: variable({
    processes: ['worker', 'api', 'cli', 'codec-server', 'dev-stack', 'scripts'],
    schema: text(),
    secret: true,
    description: 'Payload encryption keys, `id:base64` comma-separated, the active one first. Required unless AUTHCAP_CODEC=off.',
  }),
  AUTHCAP_CODEC_KEY_FILE: variable({
    processes: ['worker', 'api', 'cli', 'codec-server', 'dev-stack'],
    schema: text(),
    defaultText: "— (the CLI beside `npm start`: the stack's, `<AUTHCAP_STATE_DIR>/codec-keys.json`)",
    description: 'A JSON key file (`{"active": id, "keys": {id: base64}}`) instead of AUTHCAP_CODEC_KEYS.',
  }),
  AUTHCAP_CODEC: variable({
    processes: ['worker', 'api', 'cli', 'dev-stack'],
    schema: text(),
    description: '"off" runs without payload encryption (tests only).',
  }),
  AUTHCAP_LOG_LEVEL: variable({
    processes: ['worker', 'api', 'codec-server', 'dev-stack'],
    schema: logLevel,
    defaultText: 'warn (worker), info (others)',
    description: `How much is logged (JSON lines): ${LOG_LEVELS.join(', ')}.`,
  }),
  AUTHCAP_CPU_PROFILE_DIR: variable({
    processes: ['worker', 'api'],
    schema: text(),
    defaultText: 'off',
    description: 'With it set, SIGUSR2 starts and stops a CPU profile written there.',
  }),
  AUTHCAP_WEBHOOK_ALLOW_LOOPBACK: variable({
    processes: ['worker', 'api', 'cli', 'dev-stack'],
    schema: offUnlessOn(),
    defaultText: 'off (the dev stack: on)',
    description: 'Webhooks may go to 127.0.0.0/8 and ::1 ("1", "true" or "yes").',
  }),
  AUTHCAP_WEBHOOK_ALLOW_PRIVATE: variable({
    processes: ['worker', 'api', 'cli'],
    schema: offUnlessOn(),
    description: 'Webhooks may go to private-network addresses (RFC 1918, CGNAT, fc00::/7).',
  }),
  USER: variable({
    processes: ['cli'],
    schema: text(),
    readBy: 'the shell',
    defaultText: 'operator',
    description: 'Who voided an authorization, when `authcap void` has no --by.',
  }),

  // ── Codec server ────────────────────────────────────────────────────────────────────────────────────
  AUTHCAP_CODEC_HOST: variable({
    processes: ['codec-server'],
    schema: text('127.0.0.1'),
    description: 'The address the codec server listens on (put TLS in front).',
  }),
  AUTHCAP_CODEC_PORT: variable({
    processes: ['codec-server'],
    schema: port(8888),
    description: 'The port the codec server listens on.',
  }),
  AUTHCAP_CODEC_ALLOWED_ORIGINS: variable({
    processes: ['codec-server'],
    schema: commaList(''),
    defaultText: 'none',
    description: "The Temporal UI's origins, comma-separated (CORS).",
  }),
  AUTHCAP_CODEC_TOKEN: variable({
    processes: ['codec-server'],
    schema: secretOfAtLeast(16),
    secret: true,
    description: 'A shared bearer token (the CLI). This or a JWT verifier is required.',
  }),
  AUTHCAP_CODEC_JWKS_URL: variable({
    processes: ['codec-server'],
    schema: url(['http', 'https']),
    description: "The identity provider's JWKS: the UI's access tokens are checked against it.",
  }),
  AUTHCAP_CODEC_JWT_SECRET: variable({
    processes: ['codec-server'],
    schema: text(),
    secret: true,
    description: "An HMAC secret for the UI's access tokens, instead of a JWKS.",
  }),
  AUTHCAP_CODEC_JWT_ISSUER: variable({
    processes: ['codec-server'],
    schema: text(),
    description: 'The issuer access tokens must have (required with a JWKS or JWT secret).',
  }),
  AUTHCAP_CODEC_JWT_AUDIENCE: variable({
    processes: ['codec-server'],
    schema: text(),
    description: 'The audience access tokens must have (required with a JWKS or JWT secret).',
  }),
  AUTHCAP_CODEC_JWT_OPERATOR_CLAIM: variable({
    processes: ['codec-server'],
    schema: word('roles'),
    description:
      "The access token's claim that lists its roles: an array of strings or a space-separated string. A dotted path reaches inside an object " +
      '(`realm_access.roles`) unless a claim has that very name.',
  }),
  AUTHCAP_CODEC_JWT_OPERATOR_ROLE: variable({
    processes: ['codec-server'],
    schema: word('authcap-operator'),
    description:
      "The role an access token must list to encode (seal an operator's input, e.g. the `void` signal from the UI). Without it the token may only " +
      'decode (403 on /encode). The shared AUTHCAP_CODEC_TOKEN may do both.',
  }),
} as const;
