// The dev stack (npm start) and the maintainer scripts.
import { oneOf, onlyOne, port, positiveWhole, privateKeys, text, url, wholeBetween } from '../rules.js';
import { variable, confirmations, devNetworks, commaList } from '../variable.js';

export const devStackVariables = {
  // ── Dev stack (npm start) ───────────────────────────────────────────────────────────────────────────
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
  AUTHCAP_CONFIRMATIONS: variable({
    processes: ['dev-stack'],
    schema: confirmations,
    description: 'On anvil: when a capture counts as final, as the deployment.json the stack writes says (blocks built on it, or "safe" / "finalized").',
  }),
  AUTHCAP_WS_URL: variable({
    processes: ['dev-stack'],
    schema: text(),
    defaultText: "anvil's WebSocket",
    description: 'On anvil: set empty, the deployment.json the stack writes names no WebSocket (new blocks are polled over HTTP).',
  }),
  AUTHCAP_MERCHANT_KEYS: variable({
    processes: ['dev-stack'],
    schema: positiveWhole(1),
    description: 'Merchant keys on anvil.',
  }),
  AUTHCAP_DEV_ESCROW_ARTIFACTS: variable({
    processes: ['dev-stack'],
    schema: text(),
    defaultText: "authcap's own (contracts/build)",
    description:
      "On anvil: a folder with AuthCaptureEscrow.json, ERC3009PaymentCollector.json and OperatorRefundCollector.json ({abi, bytecode}) to deploy as the escrow instead of authcap's own, e.g. Commerce Payments' built from their repository (docs/contributing.md).",
  }),
  AUTHCAP_DEMO_PAYER_KEYS: variable({
    processes: ['dev-stack'],
    schema: privateKeys(),
    secret: true,
    description: 'On your own chain (AUTHCAP_CONFIG): payer keys (comma-separated) listed in dev.json.',
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

  // ── Maintainer scripts ──────────────────────────────────────────────────────────────────────────────
  AUTHCAP_HISTORY_SET: variable({
    processes: ['scripts'],
    schema: text('latest'),
    description: 'scripts/recordHistories.ts: which replay history set to write.',
  }),
  AUTHCAP_HISTORY_ONLY: variable({
    processes: ['scripts'],
    schema: text(),
    defaultText: 'every kind',
    description: 'scripts/recordHistories.ts: only these kinds of history (comma-separated, e.g. held-captured,held-voided).',
  }),
} as const;
