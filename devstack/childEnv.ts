// What each child process of the stack may see of this process's environment. The stack itself holds
// the payload keys (AUTHCAP_CODEC_KEYS), merchant keys and the operator's certificates; a child gets
// the few variables every program needs (where programs are, whose it is, its locale and clock) and
// the ones it reads itself, never the whole environment: PostgreSQL, Temporal, its Web UI and anvil
// read none of authcap's, so no key of ours is in their /proc/<pid>/environ for whoever can read it
// (that user, root, a core dump, a crash reporter).
import { catalog, type ProcessName, type Variable, variableNames } from '../runtime/settings/catalog.js';

/** What every child gets, if set here. */
export const BASE_ENV: readonly string[] = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'LC_MESSAGES', 'TZ', 'TMPDIR'];

/** What a Node.js child also honours (extra CA certificates, heap flags). */
const NODE_ENV_NAMES = ['NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS'];

/** The variables the settings catalog says `processName` reads (runtime/settings/catalog.ts), with what Node reads. */
export function variablesReadBy(processName: ProcessName): string[] {
  return [...NODE_ENV_NAMES, ...variableNames.filter((name) => (catalog[name] as Variable).processes.includes(processName))];
}

/**
 * A child's environment: BASE_ENV and `inherit` as this process has them, then `extra` (an
 * undefined value leaves the variable out; an empty string sets it empty).
 */
export function childEnv(
  extra: Record<string, string | undefined> = {},
  inherit: readonly string[] = [],
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...BASE_ENV, ...inherit]) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/**
 * This process's environment without the catalog's secrets: for build tools (go build, apt-get) that
 * need the operator's proxy and Go settings, which no list here could name in advance.
 */
export function withoutSecrets(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const secret = new Set<string>(variableNames.filter((name) => (catalog[name] as Variable).secret));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(from)) if (value !== undefined && !secret.has(name) && !name.startsWith('AUTHCAP_')) env[name] = value;
  return env;
}
