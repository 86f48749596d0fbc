// Reads a process's settings once, at its start: every variable the catalog lists for that process,
// validated all at once, so one start names every wrong setting instead of failing on the first.
import { catalog, type NamesOf, type ProcessName, type Settings, type ValueOf, type Variable, type VariableName } from './catalog.js';

export type { ProcessName, Settings } from './catalog.js';

/** Every wrong variable, one per line: `AUTHCAP_ACTIVITY_SLOTS must be a positive whole number, got "abc"`. */
export class SettingsError extends Error {
  override name = 'SettingsError';

  constructor(readonly problems: string[]) {
    super(problems.length === 1 ? problems[0]! : `${problems.length} settings are wrong:\n  ${problems.join('\n  ')}`);
  }
}

type Env = Record<string, string | undefined>;

/** What is wrong with one variable's value, or its typed value. */
function check(name: string, spec: Variable, env: Env): { ok: true; value: unknown } | { ok: false; problems: string[] } {
  const raw = env[name];
  const parsed = spec.schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const problems = parsed.error.issues.map((issue) => {
    const message = `${name} ${issue.message}`;
    // A key is never printed: the rules leave it out, and this makes sure.
    return spec.secret && raw ? message.split(raw).join('[redacted]') : message;
  });
  return { ok: false, problems };
}

/**
 * Every variable `processName` reads, from `env`: typed, defaults applied. Throws a SettingsError that
 * names each wrong one.
 */
export function readSettings<P extends ProcessName>(processName: P, env: Env = process.env): Settings<P> {
  const settings: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, spec] of Object.entries(catalog) as [VariableName, Variable][]) {
    if (!spec.processes.includes(processName)) continue;
    const result = check(name, spec, env);
    if (result.ok) settings[name] = result.value;
    else problems.push(...result.problems);
  }
  if (problems.length) throw new SettingsError(problems);
  return Object.freeze(settings) as Settings<P>;
}

/**
 * One variable through its catalog rule: for the functions that take an `env` (tests, embedded
 * stacks) so each variable has one rule and one default. Throws a SettingsError naming it.
 */
export function readVariable<K extends VariableName>(name: K, env: Env = process.env): ValueOf<K> {
  const result = check(name, catalog[name] as Variable, env);
  if (!result.ok) throw new SettingsError(result.problems);
  return result.value as ValueOf<K>;
}

/**
 * A variable's default, from its catalog rule: what an option left out by an embedder (a test, the
 * bench) falls back to, so the default lives in one place. Reads no environment.
 */
export function defaultOf<K extends VariableName>(name: K): ValueOf<K> {
  return readVariable(name, {});
}

/**
 * For a process's entry point: its settings, or the SettingsError's message on stderr and exit 1
 * (the way a bad deployment file stops the start).
 */
export function settingsOrExit<P extends ProcessName>(processName: P, label: string, env: Env = process.env): Settings<P> {
  try {
    return readSettings(processName, env);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    console.error(`${label}: ${err.message}`);
    process.exit(1);
  }
}

export type { NamesOf };
