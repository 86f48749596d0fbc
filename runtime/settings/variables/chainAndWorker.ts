// The deployment file and the merchant keys it names, and the worker's policy.
import { onlyOne, onUnlessOff, port, positiveWhole, privateKeys, refuse, rule, text } from '../rules.js';
import { variable, reconcileSeconds } from '../variable.js';

/** What Temporal accepts in a worker deployment version: the server joins name and build id with "." or ":". */
const versionPart = (banned: RegExp, bannedText: string) =>
  rule((raw) => {
    if (raw === undefined || raw === '') return undefined;
    if (banned.test(raw) || raw.length > 255) refuse(`must be at most 255 characters without ${bannedText}, got "${raw}"`);
    return raw;
  });

export const chainAndWorkerVariables = {
  // ── Deployment: the file, and the merchant keys it names ───────────────────────────────────────────
  AUTHCAP_CONFIG: variable({
    processes: ['worker', 'api', 'dev-stack', 'cli'],
    schema: text(),
    defaultText: "— (the CLI beside `npm start`: the dev stack's, `<AUTHCAP_STATE_DIR>/deployment.json`)",
    description:
      'The deployment file (JSON: networks, tokens, the variables holding the merchant keys): the one way a process is told its chains. On `npm start`, your chain instead of anvil (unset: the stack writes its own).',
  }),
  MERCHANT_PRIVATE_KEY: variable({
    processes: ['worker', 'dev-stack', 'cli'],
    schema: privateKeys(),
    secret: true,
    description: "The merchant's key (0x-prefixed hex): the variable a network's `merchantKeys` names by default.",
  }),
  MERCHANT_PRIVATE_KEYS: variable({
    processes: ['worker', 'dev-stack', 'cli'],
    schema: privateKeys(),
    secret: true,
    description: "More merchant keys, comma-separated, for a `merchantKeys` that names it (the dev stack's does with AUTHCAP_MERCHANT_KEYS above 1).",
  }),
  AUTHCAP_MERCHANT_ADDRESS: variable({
    processes: ['api'],
    schema: text(),
    description:
      'The merchant address(es), comma-separated: refused as a payer; the only `payTo` the x402 facilitator settles to, and the signers `/x402/supported` names.',
  }),

  // ── Worker policy ───────────────────────────────────────────────────────────────────────────────────
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
    description:
      'The log watcher that nudges authorizations whose nonce moved: one per network and task queue, a Temporal workflow whose activity runs on whichever worker is alive. A worker with it on starts it if it is not running; "0" or "false" leaves that to other workers.',
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
  AUTHCAP_BUILD_ID: variable({
    processes: ['worker'],
    schema: versionPart(/\s/, 'spaces'),
    defaultText: 'off (unversioned workers)',
    description:
      "Turns on Temporal's worker versioning: this worker is version AUTHCAP_BUILD_ID of the deployment AUTHCAP_DEPLOYMENT_NAME and gets workflow tasks only once that version is made current (`authcap deployment set-current`); workflows move to the current version at their next task (auto-upgrade). One id per build of the code (a release, a commit).",
  }),
  AUTHCAP_DEPLOYMENT_NAME: variable({
    processes: ['worker', 'cli'],
    schema: versionPart(/[.:\s]/, '".", ":" or spaces'),
    defaultText: 'the task queue (AUTHCAP_TASK_QUEUE)',
    description: 'The worker deployment whose versions the workers are, with AUTHCAP_BUILD_ID: one per task queue.',
  }),
  AUTHCAP_PROFILE_WORKFLOWS: variable({
    processes: ['worker'],
    schema: onlyOne(),
    description: '"1" runs workflows in the main thread so a CPU profile sees them (slower: profiling only).',
  }),
} as const;
