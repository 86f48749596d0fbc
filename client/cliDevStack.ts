// Beside `npm start`, the CLI reaches the dev stack as the stack's own worker does. The stack hands its
// worker the Temporal address, the deployment file, the payload keys and the merchant keys
// (devstack/appProcesses.ts), and writes the same in its state dir: dev.json (Temporal, configFile,
// merchantKeyEnv on anvil, temporalConfigFile on the production shape) and codec-keys.json. What the
// environment leaves unset is taken from there, so `npx authcap doctor` and the other commands work
// with no settings, and with the stack's own (AUTHCAP_STATE_DIR, TEMPORAL_PORT…) when it was started
// with others: dev.json says where its Temporal listens.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

type Env = NodeJS.ProcessEnv;

/** What the stack writes in dev.json that the CLI takes (devstack/stack.ts DevJson). */
interface DevStackFiles {
  temporalAddress?: unknown;
  temporalNamespace?: unknown;
  temporalConfigFile?: unknown;
  configFile?: unknown;
  merchantKeyEnv?: unknown;
}

export interface DevStackSettings {
  /** Variables the environment left unset, as the stack gives them to its worker. */
  env: Record<string, string>;
  /** Where they came from (the state dir), when anything was taken. */
  from?: string;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value : undefined);

function readDevJson(file: string): DevStackFiles | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return parsed && typeof parsed === 'object' ? (parsed as DevStackFiles) : undefined;
  } catch {
    // No stack here (or a file being written): nothing is taken from it.
    return undefined;
  }
}

/** Whether the environment already says which Temporal to reach (@temporalio/envconfig reads these). */
function namesTemporal(env: Env): boolean {
  return ['TEMPORAL_ADDRESS', 'TEMPORAL_CONFIG_FILE', 'TEMPORAL_PROFILE'].some((name) => !!env[name]?.trim());
}

/** The dev stack's settings in `stateDir` for each variable `env` leaves unset; none when no stack wrote there. */
export function devStackSettings(env: Env, stateDir: string): DevStackSettings {
  const found: Record<string, string> = {};
  const dir = resolve(stateDir);
  const codecKeys = join(dir, 'codec-keys.json');
  if (!env.AUTHCAP_CODEC_KEYS && !env.AUTHCAP_CODEC_KEY_FILE && env.AUTHCAP_CODEC !== 'off' && existsSync(codecKeys)) found.AUTHCAP_CODEC_KEY_FILE = codecKeys;
  const dev = readDevJson(join(dir, 'dev.json'));
  if (dev && !namesTemporal(env)) {
    // The production shape's profile holds the address, namespace and the CLI's own certificate.
    const profile = text(dev.temporalConfigFile);
    const address = text(dev.temporalAddress);
    if (profile) found.TEMPORAL_CONFIG_FILE = profile;
    else if (address) {
      found.TEMPORAL_ADDRESS = address;
      const namespace = text(dev.temporalNamespace);
      if (namespace && !env.TEMPORAL_NAMESPACE) found.TEMPORAL_NAMESPACE = namespace;
    }
  }
  const configFile = text(dev?.configFile);
  if (dev && configFile && !env.AUTHCAP_CONFIG?.trim()) {
    found.AUTHCAP_CONFIG = configFile;
    // The keys the stack's file names, where it holds them (anvil's well-known ones): never an operator's.
    const keys = dev.merchantKeyEnv && typeof dev.merchantKeyEnv === 'object' ? Object.entries(dev.merchantKeyEnv as Record<string, unknown>) : [];
    for (const [name, value] of keys) if (env[name] === undefined && text(value)) found[name] = value as string;
  }
  return Object.keys(found).length ? { env: found, from: dir } : { env: found };
}
