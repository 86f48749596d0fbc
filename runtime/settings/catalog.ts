// Every environment variable authcap reads, in one place: which processes read it, its rule (a zod
// schema from the raw string, with its default) and what it means. Each process validates all of
// its own at start (readSettings, ./read.ts), so a wrong one stops the start with its name; the
// functions that still take an `env` (activitySlots, WaitLimits.fromEnv, ...) read through the same
// rule (readVariable). docs/configuration.md is generated from this file (npm run docs:config).
//
// Variables read by a library (@temporalio/envconfig's TEMPORAL_*, the OTLP exporter's OTEL_*) are
// listed with `readBy` and a light rule: the library reads and checks them itself.
// Networks and tokens live in the deployment file (AUTHCAP_CONFIG, runtime/deployment/), not here.
import {
  atLeastOne,
  milliseconds,
  nonEmpty,
  offUnlessOn,
  oneOf,
  onlyOne,
  onUnlessOff,
  port,
  positiveNumber,
  positiveWhole,
  privateKeys,
  type Rule,
  refuse,
  rule,
  secretOfAtLeast,
  text,
  url,
  wholeBetween,
} from './rules.js';

/** The processes authcap runs; each reads its own variables. */
export const PROCESS_NAMES = ['worker', 'api', 'cli', 'codec-server', 'dev-stack', 'scripts'] as const;
export type ProcessName = (typeof PROCESS_NAMES)[number];

export const PROCESS_TITLES: Record<ProcessName, string> = {
  worker: 'Worker (`npm run worker`, worker/main.ts)',
  api: 'API (`npm run api`, api/main.ts)',
  cli: 'Operator CLI (`npx authcap`, client/cli.ts)',
  'codec-server': 'Codec server (`npm run codec-server`, runtime/codecServerMain.ts)',
  'dev-stack': 'Dev stack (`npm start`, devstack/main.ts)',
  scripts: 'Maintainer scripts (scripts/)',
};

export interface Variable<T = unknown> {
  readonly processes: readonly ProcessName[];
  /** One line: what it means (Markdown). */
  readonly description: string;
  readonly schema: Rule<T>;
  /** A key or token: its value is never printed, in errors or in the reference. */
  readonly secret?: boolean;
  /** The library that reads it (our rule, if any, is light). */
  readonly readBy?: string;
  /** The default, in words, where it is not one value (it depends on the process or another variable). */
  readonly defaultText?: string;
}

function variable<const P extends readonly ProcessName[], T>(spec: Variable<T> & { processes: P }): Variable<T> & { processes: P } {
  return spec;
}

const CLIENTS = ['worker', 'api', 'cli'] as const;
const TEMPORAL_CLIENTS = ['worker', 'api', 'cli', 'dev-stack', 'scripts'] as const;
const ENVCONFIG = '@temporalio/envconfig';
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** AUTHCAP_CONFIRMATIONS: the deployment loader's rule (runtime/deployment/load.ts), which the worker shares. */
const confirmations = rule((raw): number | 'safe' | 'finalized' => {
  if (raw === undefined || raw === '') return 1;
  if (raw === 'safe' || raw === 'finalized') return raw;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > 1_000) refuse(`must be a positive whole number (at most 1000), "safe" or "finalized", got "${raw}"`);
  return value;
});

/** AUTHCAP_RECONCILE_SECONDS: "off" or "0" is 0; unset is undefined (its default follows AUTHCAP_WATCH). */
const reconcileSeconds = rule((raw): number | undefined => {
  if (raw === 'off' || raw === '0') return 0;
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) refuse(`must be a positive whole number, got "${raw}"`);
  return value;
});

const logLevel = rule((raw): (typeof LOG_LEVELS)[number] | undefined => {
  if (raw === undefined || raw === '') return undefined;
  const level = raw.toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) refuse(`must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return level as (typeof LOG_LEVELS)[number];
});

const devNetworks = rule((raw): 1 | 2 => {
  const value = raw?.trim();
  if (!value || value === '1') return 1;
  if (value === '2') return 2;
  refuse(`must be 1 or 2, got "${value}"`);
});

const commaList = (fallback: string) =>
  rule((raw) =>
    (raw ?? fallback)
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
  );

export const catalog = {
  // ── Deployment: chain, token, merchant ──────────────────────────────────────────────────────────
  AUTHCAP_CONFIG: variable({
    processes: ['worker', 'api', 'dev-stack'],
    schema: text(),
    description: 'The deployment file (JSON: networks and tokens). Without it, the one-network variables below describe one network.',
  }),
  RPC_URL: variable({
    processes: ['worker', 'api', 'dev-stack'],
    schema: url(['http', 'https']),
    secret: true,
    description:
      "One network's JSON-RPC URL (without AUTHCAP_CONFIG); on `npm start`, with TOKEN_ADDRESS and MERCHANT_PRIVATE_KEY, your chain instead of anvil.",
  }),
  TOKEN_ADDRESS: variable({
    processes: ['worker', 'api', 'dev-stack'],
    schema: text(),
    description: "One network's token contract (without AUTHCAP_CONFIG); the API also refuses it as a payer.",
  }),
  MERCHANT_PRIVATE_KEY: variable({
    processes: ['worker', 'dev-stack'],
    schema: privateKeys(),
    secret: true,
    description: "The merchant's key (0x-prefixed hex): the default variable a network's `merchantKeys` names.",
  }),
  MERCHANT_PRIVATE_KEYS: variable({
    processes: ['worker', 'dev-stack'],
    schema: privateKeys(),
    secret: true,
    description: 'More merchant keys, comma-separated (MERCHANT_PRIVATE_KEY stays the first): new authorizations are spread over them.',
  }),
  AUTHCAP_NETWORK: variable({
    processes: ['worker', 'api'],
    schema: text(),
    description: 'The one network\'s CAIP-2 id (e.g. "eip155:8453"), without AUTHCAP_CONFIG; read from the node when unset.',
  }),
  AUTHCAP_WS_URL: variable({
    processes: ['worker', 'api'],
    schema: text(),
    defaultText: 'RPC_URL with ws(s)://',
    description: "The one network's WebSocket endpoint for new blocks (empty: poll over HTTP).",
  }),
  AUTHCAP_CONFIRMATIONS: variable({
    processes: ['worker', 'api'],
    schema: confirmations,
    description: 'When a capture counts as final on the one network: blocks built on it, or "safe" / "finalized".',
  }),
  AUTHCAP_MERCHANT_ADDRESS: variable({
    processes: ['api'],
    schema: text(),
    description: 'The merchant address(es), comma-separated: refused as a payer.',
  }),

  // ── Worker policy ───────────────────────────────────────────────────────────────────────────────
  AUTHCAP_VALIDITY_SECONDS: variable({
    processes: ['worker'],
    schema: positiveWhole(900),
    description: "How long a payer's authorization is valid by default (seconds).",
  }),
  AUTHCAP_MAX_VALIDITY_SECONDS: variable({
    processes: ['worker'],
    schema: positiveWhole(7 * 24 * 3600),
    description: 'The longest validity an authorization may ask for (seconds).',
  }),
  AUTHCAP_REFUND_VALIDITY_SECONDS: variable({
    processes: ['worker'],
    schema: positiveWhole(300),
    description: 'How long a signed refund transfer stays valid (seconds).',
  }),
  AUTHCAP_HISTORY_LIMIT: variable({
    processes: ['worker'],
    schema: positiveWhole(2_000),
    description: 'Workflow history events before an authorization continues as new.',
  }),
  AUTHCAP_RECONCILE_SECONDS: variable({
    processes: ['worker'],
    schema: reconcileSeconds,
    defaultText: '0 (off) with the watcher on; 15 with AUTHCAP_WATCH=0',
    description: 'How often an open authorization re-reads the chain by itself ("off" or 0: never).',
  }),
  AUTHCAP_WATCH: variable({
    processes: ['worker'],
    schema: onUnlessOff(),
    description: 'The log watcher that nudges authorizations whose nonce moved; "0" or "false" turns it off.',
  }),
  AUTHCAP_WATCHER_CURSOR: variable({
    processes: ['worker'],
    schema: text(),
    defaultText: '`<AUTHCAP_STATE_DIR>/watcher-cursor.json`',
    description: "The watcher's cursor file.",
  }),
  AUTHCAP_ACTIVITY_SLOTS: variable({
    processes: ['worker'],
    schema: positiveWhole(100),
    description: 'Short activities one worker process runs at once.',
  }),
  AUTHCAP_FOLLOWER_SLOTS: variable({
    processes: ['worker'],
    schema: positiveWhole(2_000),
    description: 'Long waits (captures followed to depth, webhook dispatchers) one worker process runs at once.',
  }),
  AUTHCAP_WORKFLOW_CACHE_SIZE: variable({
    processes: ['worker'],
    schema: positiveWhole(250),
    description: 'Workflows kept in memory per worker process (an evicted one is replayed from its history).',
  }),
  AUTHCAP_WORKER_METRICS_PORT: variable({
    processes: ['worker', 'dev-stack'],
    schema: port(),
    defaultText: 'off (the dev stack: a free port)',
    description: "The worker's /metrics and /readyz port on 127.0.0.1 (0: any free port).",
  }),
  AUTHCAP_PROFILE_WORKFLOWS: variable({
    processes: ['worker'],
    schema: onlyOne(),
    description: '"1" runs workflows in the main thread so a CPU profile sees them (slower: profiling only).',
  }),

  // ── API ─────────────────────────────────────────────────────────────────────────────────────────
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
    description: 'One more order-service API key, besides the key file (older deployments).',
  }),
  AUTHCAP_IDEMPOTENCY_DIR: variable({
    processes: ['api'],
    schema: text(),
    defaultText: '`<AUTHCAP_STATE_DIR>/idempotency`',
    description: 'Where answers to Idempotency-Key requests are kept.',
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

  // ── Shared by the processes ─────────────────────────────────────────────────────────────────────
  AUTHCAP_STATE_DIR: variable({
    processes: ['worker', 'api', 'cli', 'dev-stack'],
    schema: text('.authcap'),
    description: 'Where local state lives: API keys, idempotency answers, the checkout secret, the watcher cursor, the dev stack.',
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

  // ── Codec server ────────────────────────────────────────────────────────────────────────────────
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

  // ── Dev stack (npm start) ───────────────────────────────────────────────────────────────────────
  AUTHCAP_RPC_PORT: variable({
    processes: ['dev-stack'],
    schema: port(8545),
    description: "Anvil's port (the second network's is the next one).",
  }),
  TEMPORAL_PORT: variable({
    processes: ['dev-stack'],
    schema: port(7233),
    description: "The embedded Temporal server's port.",
  }),
  TEMPORAL_UI_PORT: variable({
    processes: ['dev-stack'],
    schema: port(8233),
    description: "The embedded Temporal Web UI's port.",
  }),
  AUTHCAP_DEV_NETWORKS: variable({
    processes: ['dev-stack'],
    schema: devNetworks,
    description: 'Anvils to run: 1, or 2 (a second chain with an 18-decimal token).',
  }),
  AUTHCAP_MERCHANT_KEYS: variable({
    processes: ['dev-stack'],
    schema: positiveWhole(1),
    description: 'Merchant keys on anvil.',
  }),
  AUTHCAP_DEMO_PAYER_KEYS: variable({
    processes: ['dev-stack'],
    schema: privateKeys(),
    secret: true,
    description: 'On your own chain: payer keys (comma-separated) listed in dev.json.',
  }),
  AUTHCAP_WORKERS: variable({
    processes: ['dev-stack'],
    schema: wholeBetween(1, 16),
    defaultText: '1 (2 with AUTHCAP_TEMPORAL=postgres)',
    description: 'Worker processes the dev stack runs.',
  }),
  AUTHCAP_APIS: variable({
    processes: ['dev-stack'],
    schema: wholeBetween(1, 16),
    defaultText: '1 (2 with AUTHCAP_TEMPORAL=postgres)',
    description: 'API processes the dev stack runs.',
  }),
  AUTHCAP_TEMPORAL: variable({
    processes: ['dev-stack'],
    schema: oneOf(['dev', 'postgres'], 'dev'),
    description: 'Which Temporal to run: the CLI\'s dev server, or "postgres" (the production shape).',
  }),
  AUTHCAP_WEBHOOK_URL: variable({
    processes: ['dev-stack'],
    schema: url(['http', 'https']),
    description: 'A webhook endpoint `npm start` registers for every event.',
  }),
  AUTHCAP_SQLITE_PRAGMAS: variable({
    processes: ['dev-stack'],
    schema: commaList('journal_mode=wal,synchronous=normal'),
    description: "The dev server's SQLite pragmas, comma-separated (empty: SQLite's defaults).",
  }),
  AUTHCAP_TEMPORAL_DYNAMIC_CONFIG: variable({
    processes: ['dev-stack'],
    schema: commaList('matching.numTaskqueueReadPartitions=1,matching.numTaskqueueWritePartitions=1,system.enableActivityEagerExecution=true'),
    description: "The dev server's dynamic config, comma-separated KEY=VALUE (empty: none).",
  }),
  AUTHCAP_POSTGRES_BIN: variable({
    processes: ['dev-stack'],
    schema: text(),
    defaultText: "Debian's newest, else PATH",
    description: "PostgreSQL's bin directory (AUTHCAP_TEMPORAL=postgres).",
  }),
  AUTHCAP_POSTGRES_OS_USER: variable({
    processes: ['dev-stack'],
    schema: text(),
    defaultText: 'postgres, else nobody (as root)',
    description: 'The OS user PostgreSQL runs as when the stack runs as root.',
  }),
  AUTHCAP_CACHE_DIR: variable({
    processes: ['dev-stack'],
    schema: text(),
    defaultText: '`$XDG_CACHE_HOME/authcap`',
    description: 'Where downloaded and built binaries (Temporal CLI, server, UI) are kept.',
  }),
  XDG_CACHE_HOME: variable({
    processes: ['dev-stack'],
    schema: text(),
    readBy: 'the XDG convention',
    defaultText: '`~/.cache`',
    description: 'The user cache directory AUTHCAP_CACHE_DIR defaults under.',
  }),
  AUTHCAP_FROM_SOURCE: variable({
    processes: ['dev-stack'],
    schema: onlyOne(),
    description: '"1" runs the worker and API from TypeScript sources even when a fresh build exists.',
  }),
  TEMPORAL_CLI_PATH: variable({
    processes: ['dev-stack'],
    schema: text(),
    defaultText: 'PATH, else downloaded',
    description: 'The `temporal` CLI to run the dev server with.',
  }),
  TEMPORAL_SERVER_PATH: variable({
    processes: ['dev-stack'],
    schema: text(),
    defaultText: 'built from source',
    description: 'A temporal-server binary (AUTHCAP_TEMPORAL=postgres), with TEMPORAL_SQL_TOOL_PATH.',
  }),
  TEMPORAL_SQL_TOOL_PATH: variable({
    processes: ['dev-stack'],
    schema: text(),
    defaultText: 'built from source',
    description: 'A temporal-sql-tool binary (AUTHCAP_TEMPORAL=postgres), with TEMPORAL_SERVER_PATH.',
  }),
  TEMPORAL_UI_SERVER_PATH: variable({
    processes: ['dev-stack'],
    schema: text(),
    defaultText: 'built from source',
    description: 'A Temporal UI server binary (AUTHCAP_TEMPORAL=postgres).',
  }),
  CGO_ENABLED: variable({
    processes: ['dev-stack'],
    schema: text('0'),
    readBy: 'go build',
    description: 'Passed to `go install` when the dev stack builds Temporal binaries.',
  }),
  PATH: variable({
    processes: ['dev-stack'],
    schema: text(),
    readBy: 'the shell',
    defaultText: '',
    description: 'Searched for the `temporal` CLI.',
  }),

  // ── Maintainer scripts ──────────────────────────────────────────────────────────────────────────
  AUTHCAP_HISTORY_SET: variable({
    processes: ['scripts'],
    schema: text('latest'),
    description: 'scripts/recordHistories.ts: which replay history set to write.',
  }),

  // ── Read by libraries ───────────────────────────────────────────────────────────────────────────
  TEMPORAL_ADDRESS: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    defaultText: '127.0.0.1:7233',
    description: "Temporal's frontend (host:port); on `npm start`, an external cluster instead of the embedded one.",
  }),
  TEMPORAL_NAMESPACE: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    defaultText: 'default',
    description: 'The Temporal namespace.',
  }),
  TEMPORAL_API_KEY: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    secret: true,
    description: 'An API key for Temporal Cloud.',
  }),
  TEMPORAL_CONFIG_FILE: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: 'A temporal.toml with connection profiles (the dev stack writes one for mutual TLS).',
  }),
  TEMPORAL_PROFILE: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    defaultText: 'default',
    description: 'The profile of TEMPORAL_CONFIG_FILE to use.',
  }),
  TEMPORAL_TLS: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: '"true" connects with TLS.',
  }),
  TEMPORAL_TLS_CLIENT_CERT_PATH: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: 'Client certificate for mutual TLS (or TEMPORAL_TLS_CLIENT_CERT_DATA).',
  }),
  TEMPORAL_TLS_CLIENT_CERT_DATA: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: 'Client certificate (PEM) for mutual TLS.',
  }),
  TEMPORAL_TLS_CLIENT_KEY_PATH: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: "The client certificate's key (or TEMPORAL_TLS_CLIENT_KEY_DATA).",
  }),
  TEMPORAL_TLS_CLIENT_KEY_DATA: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    secret: true,
    description: "The client certificate's key (PEM).",
  }),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: "The CA that signed the server's certificate (or TEMPORAL_TLS_SERVER_CA_CERT_DATA).",
  }),
  TEMPORAL_TLS_SERVER_CA_CERT_DATA: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: "The CA that signed the server's certificate (PEM).",
  }),
  TEMPORAL_TLS_SERVER_NAME: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: "The name the server's certificate must carry.",
  }),
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: variable({
    processes: TEMPORAL_CLIENTS,
    schema: text(),
    readBy: ENVCONFIG,
    description: '"true" skips checking the server certificate\'s host name.',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: variable({
    processes: CLIENTS,
    schema: url(['http', 'https']),
    readBy: '@opentelemetry/exporter-trace-otlp-http (and authcap: tracing is on when set)',
    defaultText: 'off',
    description: 'An OTLP/HTTP collector: with it set, workflows, activities and client calls are traced.',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: variable({
    processes: CLIENTS,
    schema: text(),
    readBy: '@opentelemetry/exporter-trace-otlp-http',
    secret: true,
    description: 'Headers sent to the collector (`key=value,...`), e.g. its API key.',
  }),
  OTEL_SERVICE_NAME: variable({
    processes: CLIENTS,
    schema: text(),
    defaultText: 'authcap-worker / authcap-client',
    description: "The traces' service name.",
  }),
} as const;

export type Catalog = typeof catalog;
export type VariableName = keyof Catalog;
export type ValueOf<K extends VariableName> = Catalog[K]['schema'] extends Rule<infer T> ? T : never;
/** The names a process reads. */
export type NamesOf<P extends ProcessName> = { [K in VariableName]: P extends Catalog[K]['processes'][number] ? K : never }[VariableName];
/** What readSettings gives a process: each of its variables, typed, defaults applied. */
export type Settings<P extends ProcessName> = { readonly [K in NamesOf<P>]: ValueOf<K> };

export const variableNames = Object.keys(catalog) as VariableName[];
