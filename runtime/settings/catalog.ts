// Every environment variable authcap reads, in one place: which processes read it, its rule (a zod
// schema from the raw string, with its default) and what it means. Each process validates all of
// its own at start, at its entry (readSettings, ./read.ts: worker/main.ts, api/main.ts,
// devstack/main.ts, client/cli.ts, runtime/codecServerMain.ts), so a wrong one stops the start with its
// name, and passes the values down as options; an option left out falls back to its variable's default
// (defaultOf), never to the environment. The functions that take an `env` (the client library, whose
// embedder configures it through the environment; the doctor, which examines one) read through the same
// rule (readVariable). docs/configuration.md is generated from this file (npm run docs:config).
//
// Variables read by a library (@temporalio/envconfig's TEMPORAL_*, the OTLP exporter's OTEL_*) are
// listed with `readBy` and a light rule: the library reads and checks them itself.
// Networks and tokens live in the deployment file (AUTHCAP_CONFIG, runtime/deployment/), not here.
import type { Rule } from './rules.js';
import type { ProcessName } from './variable.js';
import { apiVariables } from './variables/api.js';
import { chainAndWorkerVariables } from './variables/chainAndWorker.js';
import { devStackVariables } from './variables/devStack.js';
import { librariesVariables } from './variables/libraries.js';
import { sharedVariables } from './variables/shared.js';

export { PROCESS_NAMES, PROCESS_TITLES, type ProcessName, type Variable } from './variable.js';

export const catalog = {
  ...chainAndWorkerVariables,
  ...apiVariables,
  ...sharedVariables,
  ...devStackVariables,
  ...librariesVariables,
} as const;

export type Catalog = typeof catalog;
export type VariableName = keyof Catalog;
export type ValueOf<K extends VariableName> = Catalog[K]['schema'] extends Rule<infer T> ? T : never;
/** The names a process reads. */
export type NamesOf<P extends ProcessName> = { [K in VariableName]: P extends Catalog[K]['processes'][number] ? K : never }[VariableName];
/** What readSettings gives a process: each of its variables, typed, defaults applied. */
export type Settings<P extends ProcessName> = { readonly [K in NamesOf<P>]: ValueOf<K> };

export const variableNames = Object.keys(catalog) as VariableName[];
