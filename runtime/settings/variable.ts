// What a variable of the settings catalog is (runtime/settings/catalog.ts), the processes that
// read them, and the rules several sections share.
import { type Rule, refuse, rule } from './rules.js';

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

export function variable<const P extends readonly ProcessName[], T>(spec: Variable<T> & { processes: P }): Variable<T> & { processes: P } {
  return spec;
}

export const CLIENTS = ['worker', 'api', 'cli'] as const;
export const TEMPORAL_CLIENTS = ['worker', 'api', 'cli', 'dev-stack', 'scripts'] as const;
export const ENVCONFIG = '@temporalio/envconfig';
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** AUTHCAP_CONFIRMATIONS: the deployment file's rule (runtime/deployment/schema.ts), for the dev chain's file. */
export const confirmations = rule((raw): number | 'safe' | 'finalized' => {
  if (raw === undefined || raw === '') return 1;
  if (raw === 'safe' || raw === 'finalized') return raw;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > 1_000) refuse(`must be a positive whole number (at most 1000), "safe" or "finalized", got "${raw}"`);
  return value;
});

/** AUTHCAP_RECONCILE_SECONDS: "off" or "0" is 0; unset is undefined (its default follows AUTHCAP_WATCH). */
export const reconcileSeconds = rule((raw): number | undefined => {
  if (raw === 'off' || raw === '0') return 0;
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) refuse(`must be a positive whole number, got "${raw}"`);
  return value;
});

export const logLevel = rule((raw): (typeof LOG_LEVELS)[number] | undefined => {
  if (raw === undefined || raw === '') return undefined;
  const level = raw.toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) refuse(`must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return level as (typeof LOG_LEVELS)[number];
});

export const devNetworks = rule((raw): 1 | 2 => {
  const value = raw?.trim();
  if (!value || value === '1') return 1;
  if (value === '2') return 2;
  refuse(`must be 1 or 2, got "${value}"`);
});

export const commaList = (fallback: string) =>
  rule((raw) =>
    (raw ?? fallback)
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
  );
