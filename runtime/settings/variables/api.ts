// The HTTP API process.
import { atLeastOne, milliseconds, port, positiveNumber, positiveWhole, refuse, rule, secretOfAtLeast, text, url } from '../rules.js';
import { variable } from '../variable.js';

/**
 * A PostgreSQL connection URL with a host and a database. Never echoed: it carries a password, so
 * what is wrong is said without the value.
 */
const postgresUrl = rule((raw): string | undefined => {
  if (raw === undefined || raw.trim() === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    refuse('must be a postgres:// URL (postgres://user:password@host:5432/database), and this is not a URL');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    refuse(`must be a postgres:// or postgresql:// URL, not ${parsed.protocol}//`);
  }
  if (!parsed.hostname) refuse('must name a host (postgres://user:password@host:5432/database)');
  if (parsed.pathname.length <= 1) refuse('must name a database (postgres://user:password@host:5432/database)');
  return raw;
});

export const apiVariables = {
  // ── API ─────────────────────────────────────────────────────────────────────────────────────────────
  AUTHCAP_API_PORT: variable({
    processes: ['api', 'dev-stack'],
    schema: port(8080),
    description: 'The port the API listens on (0: any free port).',
  }),
  AUTHCAP_API_HOST: variable({
    processes: ['api', 'dev-stack'],
    schema: text('127.0.0.1'),
    description: 'The address the API listens on.',
  }),
  AUTHCAP_KEYS_FILE: variable({
    processes: ['api', 'cli'],
    schema: text(),
    defaultText: '`<AUTHCAP_STATE_DIR>/api-keys.json`',
    description: 'The API key file (`authcap keys` writes it).',
  }),
  AUTHCAP_API_KEY: variable({
    processes: ['api', 'cli'],
    schema: text(),
    secret: true,
    description: 'One more order-service API key, besides the key file: for a deployment that hands keys out as secret variables.',
  }),
  AUTHCAP_IDEMPOTENCY_DIR: variable({
    processes: ['api'],
    schema: text(),
    defaultText: '`<AUTHCAP_STATE_DIR>/idempotency`',
    description: 'Where answers to Idempotency-Key requests are kept (API processes of one host), without AUTHCAP_IDEMPOTENCY_DATABASE_URL.',
  }),
  AUTHCAP_IDEMPOTENCY_DATABASE_URL: variable({
    processes: ['api', 'dev-stack'],
    schema: postgresUrl,
    secret: true,
    defaultText: 'unset: files in AUTHCAP_IDEMPOTENCY_DIR',
    description:
      'A PostgreSQL database (`postgres://user:password@host:5432/db`) for Idempotency-Key answers, shared by every API process on any host; its table is made at start if missing. Set it whenever APIs run on more than one host (files are shared only on one). The production-shape dev stack sets its own.',
  }),
  AUTHCAP_CAPTURE_WAIT_MS: variable({
    processes: ['api'],
    schema: milliseconds(),
    defaultText: "the client library's",
    description: 'How long capture, refund and cancel wait for the chain before answering 202.',
  }),
  AUTHCAP_RATE_LIMIT: variable({
    processes: ['api'],
    schema: positiveNumber(500, 'requests per second'),
    description: 'Requests per second per API key (burst twice that).',
  }),
  AUTHCAP_PUBLIC_RATE_LIMIT: variable({
    processes: ['api'],
    schema: positiveNumber(20, 'requests per second'),
    description: "Requests per second per client address on the payer's checkout pages (burst twice that).",
  }),
  AUTHCAP_MAX_WAITS_PER_KEY: variable({
    processes: ['api'],
    schema: atLeastOne(100),
    description: 'Long polls (`?wait=`) open at once per API key.',
  }),
  AUTHCAP_MAX_WAITS: variable({
    processes: ['api'],
    schema: atLeastOne(1_000),
    description: 'Long polls open at once per API process.',
  }),
  AUTHCAP_REFUND_WINDOW_DAYS: variable({
    processes: ['api', 'cli'],
    schema: positiveWhole(30),
    description: 'How long after its capture an authorization accepts refunds (days).',
  }),
  AUTHCAP_WORKER_READYZ_URL: variable({
    processes: ['api'],
    schema: url(['http', 'https']),
    description: "A worker's /readyz, reported in the API's /readyz.",
  }),
  AUTHCAP_PUBLIC_URL: variable({
    processes: ['api'],
    schema: text(),
    defaultText: "the API's own URL",
    description: 'Where payers reach the checkout pages (links are made with it, path included).',
  }),
  AUTHCAP_CHECKOUT_SECRET: variable({
    processes: ['api'],
    schema: secretOfAtLeast(32, ' (e.g. openssl rand -base64 32)'),
    secret: true,
    defaultText: '`<AUTHCAP_STATE_DIR>/checkout-secret` (made on first use)',
    description: 'The secret checkout links are signed with; every API process of a deployment needs the same one.',
  }),
  AUTHCAP_MERCHANT_NAME: variable({
    processes: ['api'],
    schema: text(),
    defaultText: 'Merchant',
    description: 'The name payers see on the checkout pages.',
  }),
} as const;
