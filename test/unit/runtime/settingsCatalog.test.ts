// The settings catalog (runtime/settings/catalog.ts): every variable authcap reads is in it, the
// generated reference is the committed one, and each process's start refuses wrong values by name.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalog, PROCESS_NAMES } from '../../../runtime/settings/catalog.js';
import { readSettings, readVariable, SettingsError } from '../../../runtime/settings/read.js';
import { configurationReference } from '../../../runtime/settings/reference.js';
import { EXAMPLE_DEPLOYMENT } from '../../../runtime/deployment/reference.js';
import { deploymentSchema, networkSchema } from '../../../runtime/deployment/schema.js';

const root = join(import.meta.dirname, '..', '..', '..');
const SOURCE_DIRS = ['activities', 'api', 'client', 'domain', 'runtime', 'worker', 'workflows', 'devstack', 'bin', 'scripts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|mjs)$/.test(name) ? [path] : [];
  });
}

/** `process.env.X`, `env.X`, `env?.X` and `env['X']`: the names a file reads from an environment. */
function namesRead(text: string): string[] {
  const names = new Set<string>();
  for (const match of text.matchAll(/\benv\??\.([A-Z][A-Z0-9_]*)\b/g)) names.add(match[1]!);
  for (const match of text.matchAll(/\benv\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\]/g)) names.add(match[1]!);
  return [...names];
}

const KEY = `0x${'22'.repeat(32)}`;

describe('the settings catalog', () => {
  it('docs/configuration.md is what `npm run docs:config` makes now', () => {
    const committed = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
    expect(committed, 'run `npm run docs:config`').toBe(configurationReference());
  });

  it("the configuration page's deployment-file section lists every field of the schema, and its example is a valid deployment", () => {
    const page = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');
    const network = Object.keys(networkSchema.shape);
    expect(network.length).toBeGreaterThan(5);
    for (const field of network) expect(page).toContain(`| \`networks[].${field}\` |`);
    expect(deploymentSchema.safeParse(EXAMPLE_DEPLOYMENT).success).toBe(true);
  });

  it('lists every variable read anywhere in the source', () => {
    const missing: string[] = [];
    for (const file of SOURCE_DIRS.flatMap((dir) => sourceFiles(join(root, dir)))) {
      for (const name of namesRead(readFileSync(file, 'utf8'))) {
        if (!(name in catalog)) missing.push(`${name} (${file.slice(root.length + 1)})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('the scan sees the ways variables are read', () => {
    expect(namesRead("process.env.A_B; env.C ?? 1; env?.D_E; env['F']; env[name]; environment.G")).toEqual(['A_B', 'C', 'D_E', 'F']);
  });

  it('workflows read no environment (they run in the sandbox)', () => {
    const readers = sourceFiles(join(root, 'workflows')).filter((file) => /process\.env|\benv\??[.[]/.test(readFileSync(file, 'utf8')));
    expect(readers).toEqual([]);
  });

  it('every variable belongs to a process and says what it means', () => {
    for (const [name, spec] of Object.entries(catalog)) {
      expect(spec.processes.length, name).toBeGreaterThan(0);
      expect(
        spec.processes.every((p) => (PROCESS_NAMES as readonly string[]).includes(p)),
        name,
      ).toBe(true);
      expect(spec.description.length, name).toBeGreaterThan(10);
    }
  });
});

describe('readSettings', () => {
  it('gives the api and worker their defaults with an (almost) empty environment', () => {
    const api = readSettings('api', {});
    expect(api.AUTHCAP_API_PORT).toBe(8080);
    expect(api.AUTHCAP_API_HOST).toBe('127.0.0.1');
    expect(api.AUTHCAP_STATE_DIR).toBe('.authcap');
    expect(api.AUTHCAP_MAX_WAITS_PER_KEY).toBe(100);
    expect(api.AUTHCAP_MAX_WAITS).toBe(1_000);
    expect(api.AUTHCAP_RATE_LIMIT).toBe(500);
    expect(api.AUTHCAP_PUBLIC_RATE_LIMIT).toBe(20);
    expect(api.AUTHCAP_REFUND_WINDOW_DAYS).toBe(30);
    expect(api.AUTHCAP_CAPTURE_WAIT_MS).toBeUndefined();
    const worker = readSettings('worker', { AUTHCAP_CONFIG: '/etc/authcap/deployment.json', MERCHANT_PRIVATE_KEY: KEY });
    expect(worker).toMatchObject({
      AUTHCAP_ACTIVITY_SLOTS: 100,
      AUTHCAP_FOLLOWER_SLOTS: 2_000,
      AUTHCAP_WORKFLOW_CACHE_SIZE: 250,
      AUTHCAP_VALIDITY_SECONDS: 900,
      AUTHCAP_MAX_VALIDITY_SECONDS: 7 * 24 * 3600,
      AUTHCAP_HISTORY_LIMIT: 2_000,
      AUTHCAP_REFUND_VALIDITY_SECONDS: 300,
      AUTHCAP_WATCH: true,
      AUTHCAP_TASK_QUEUE: 'authcap',
      AUTHCAP_PROFILE_WORKFLOWS: false,
    });
    expect(worker.AUTHCAP_WORKER_METRICS_PORT).toBeUndefined();
    expect(worker.AUTHCAP_RECONCILE_SECONDS).toBeUndefined();
  });

  it('reads only the variables of its process', () => {
    expect(Object.keys(readSettings('codec-server', {}))).not.toContain('AUTHCAP_ACTIVITY_SLOTS');
    expect(readSettings('worker', { AUTHCAP_CODEC_PORT: 'nope' }).AUTHCAP_ACTIVITY_SLOTS).toBe(100);
  });

  it('refuses a bad value, naming the variable, what is wrong and the value', () => {
    const refusal = (processName: Parameters<typeof readSettings>[0], env: Record<string, string>) => {
      try {
        readSettings(processName, env);
      } catch (err) {
        expect(err).toBeInstanceOf(SettingsError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refusal('worker', { AUTHCAP_ACTIVITY_SLOTS: 'abc' })).toBe('AUTHCAP_ACTIVITY_SLOTS must be a positive whole number, got "abc"');
    expect(refusal('api', { AUTHCAP_MAX_WAITS: '0' })).toBe('AUTHCAP_MAX_WAITS must be a whole number of at least 1, got "0"');
    expect(refusal('api', { AUTHCAP_RATE_LIMIT: 'fast' })).toMatch(/^AUTHCAP_RATE_LIMIT must be a positive number/);
    expect(refusal('api', { AUTHCAP_API_PORT: '70000' })).toBe('AUTHCAP_API_PORT must be a port number, got "70000"');
    expect(refusal('worker', { AUTHCAP_LOG_LEVEL: 'loud' })).toMatch(/^AUTHCAP_LOG_LEVEL must be one of .*got "loud"/);
    expect(refusal('dev-stack', { AUTHCAP_CONFIRMATIONS: 'soon' })).toMatch(/^AUTHCAP_CONFIRMATIONS must be .*"safe" or "finalized", got "soon"/);
    expect(refusal('dev-stack', { AUTHCAP_TEMPORAL: 'cloud' })).toBe('AUTHCAP_TEMPORAL must be "dev" or "postgres", got "cloud"');
    expect(refusal('codec-server', { AUTHCAP_CODEC_PORT: 'x' })).toBe('AUTHCAP_CODEC_PORT must be a port number, got "x"');
  });

  it('reports every bad variable at once', () => {
    let message = '';
    try {
      readSettings('worker', { AUTHCAP_ACTIVITY_SLOTS: 'abc', AUTHCAP_WORKFLOW_CACHE_SIZE: '-1', AUTHCAP_RECONCILE_SECONDS: 'soon' });
    } catch (err) {
      expect((err as SettingsError).problems).toHaveLength(3);
      message = (err as Error).message;
    }
    expect(message).toMatch(/^3 settings are wrong:/);
    expect(message).toContain('AUTHCAP_ACTIVITY_SLOTS must be a positive whole number, got "abc"');
    expect(message).toContain('AUTHCAP_WORKFLOW_CACHE_SIZE must be a positive whole number, got "-1"');
    expect(message).toContain('AUTHCAP_RECONCILE_SECONDS must be a positive whole number, got "soon"');
  });

  it('never prints a secret', () => {
    const secret = 'not-a-key-but-secret';
    const err = (() => {
      try {
        readSettings('worker', { MERCHANT_PRIVATE_KEY: secret });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err?.message).toMatch(/^MERCHANT_PRIVATE_KEY must be 32-byte keys/);
    expect(err?.message).not.toContain(secret);
    expect(() => readVariable('AUTHCAP_CHECKOUT_SECRET', { AUTHCAP_CHECKOUT_SECRET: 'short' })).toThrow(
      /^AUTHCAP_CHECKOUT_SECRET must be at least 32 characters/,
    );
  });

  it('an empty value is unset where there is a default; the rules are those of the old readers', () => {
    expect(readVariable('AUTHCAP_ACTIVITY_SLOTS', { AUTHCAP_ACTIVITY_SLOTS: '' })).toBe(100);
    expect(readVariable('AUTHCAP_MAX_WAITS', { AUTHCAP_MAX_WAITS: '  ' })).toBe(1_000);
    expect(readVariable('AUTHCAP_RECONCILE_SECONDS', { AUTHCAP_RECONCILE_SECONDS: 'off' })).toBe(0);
    expect(readVariable('AUTHCAP_WATCH', { AUTHCAP_WATCH: 'false' })).toBe(false);
    expect(readVariable('AUTHCAP_WEBHOOK_ALLOW_LOOPBACK', { AUTHCAP_WEBHOOK_ALLOW_LOOPBACK: 'YES' })).toBe(true);
    expect(readVariable('AUTHCAP_CONFIRMATIONS', { AUTHCAP_CONFIRMATIONS: 'finalized' })).toBe('finalized');
    expect(readVariable('AUTHCAP_LOG_LEVEL', { AUTHCAP_LOG_LEVEL: 'DEBUG' })).toBe('debug');
    expect(readVariable('AUTHCAP_SQLITE_PRAGMAS', { AUTHCAP_SQLITE_PRAGMAS: '' })).toEqual([]);
    expect(readVariable('AUTHCAP_PUBLIC_RATE_LIMIT', { AUTHCAP_PUBLIC_RATE_LIMIT: '0.5' })).toBe(0.5);
  });
});
