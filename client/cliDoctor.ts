// `authcap doctor`: checks a deployment's configuration and reachability with the environment the
// worker and the API run with, and says what is wrong in plain words and what to do. Every network
// call is bounded (runtime/doctor/report.ts), independent checks run at once, and the exit code is 1
// when anything FAILs, so a deploy script can run it as a gate. The checks are in runtime/doctor/.
import { Client, type Connection } from '@temporalio/client';
import Table from 'cli-table3';
import type { EncryptionCodec } from '../runtime/codec.js';
import { chainChecks } from '../runtime/doctor/chainChecks.js';
import { codecCheck, deploymentCheck, settingsChecks } from '../runtime/doctor/configChecks.js';
import { bounded, check, exitCodeOf, firstLine, report, STATUS_LABEL, summaryLine, type DoctorCheck } from '../runtime/doctor/report.js';
import { connectTemporal, temporalChecks } from '../runtime/doctor/temporalChecks.js';
import { webhookChecks } from '../runtime/doctor/webhookChecks.js';
import { loadTemporalSettings, type TemporalSettings } from '../runtime/temporal.js';
import { webhookAddressPolicyFromEnv } from '../runtime/webhookAddressPolicy.js';
import type { DevStackSettings } from './cliDevStack.js';
import type { WebhookEndpoint } from '../domain/events.js';
import { TemporalTransport } from './transport/temporalTransport.js';
import { list as listWebhookEndpoints } from './webhookEndpoints/list.js';

type Out = (line: string) => void;

/**
 * `env` is the CLI's, completed beside `npm start` with the dev stack's settings (`devStack`: what was
 * taken, said on a line of its own).
 */
export async function doctorCommand(values: { json?: boolean }, env: NodeJS.ProcessEnv, devStack: DevStackSettings, out: Out): Promise<number> {
  const started = Date.now();
  const checks: DoctorCheck[] = [...devStackCheck(devStack), ...settingsChecks(env)];
  const deployment = deploymentCheck(env);
  const codec = await codecCheck(env);
  checks.push(deployment.check, codec.check);
  const [chain, temporal] = await Promise.all([
    deployment.deployment
      ? chainChecks(deployment.deployment, deployment.keysLoaded)
      : [check('skip', 'network', 'networks', 'not checked: the deployment configuration does not load')],
    temporalAndWebhooks(env, codec.codec),
  ]);
  checks.push(...chain, ...temporal);
  const result = report(checks);
  if (values.json) out(JSON.stringify({ ...result, elapsedMs: Date.now() - started }, null, 2));
  else {
    out(doctorTable(result.checks));
    out(`${summaryLine(result)} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
  return exitCodeOf(result);
}

/** Beside `npm start`: which settings were the dev stack's (none taken: no line). */
function devStackCheck(devStack: DevStackSettings): DoctorCheck[] {
  if (!devStack.from) return [];
  const names = Object.keys(devStack.env).join(', ');
  return [
    check('ok', 'settings', 'dev stack', `${names} from the dev stack in ${devStack.from} (what this environment leaves unset, as its worker gets them)`),
  ];
}

/**
 * Temporal's connection settings without the codec (checked on its own: keys that do not parse must
 * not stop the Temporal checks), and the codec that passed its check as the converter.
 */
function temporalSettingsOf(env: NodeJS.ProcessEnv, codec: EncryptionCodec | undefined): TemporalSettings {
  const withoutKeys = { ...env, AUTHCAP_CODEC_KEYS: undefined, AUTHCAP_CODEC_KEY_FILE: undefined };
  return { ...loadTemporalSettings({}, withoutKeys), dataConverter: codec ? { payloadCodecs: [codec] } : undefined };
}

async function temporalAndWebhooks(env: NodeJS.ProcessEnv, codec: EncryptionCodec | undefined): Promise<DoctorCheck[]> {
  let settings: TemporalSettings;
  try {
    settings = temporalSettingsOf(env, codec);
  } catch (err) {
    return [check('fail', 'temporal', 'connection settings', firstLine(err), 'correct the TEMPORAL_* variables or the temporal.toml profile')];
  }
  const connected = await connectTemporal(settings);
  if (!connected.connection) {
    const why = 'not checked: Temporal does not answer';
    return [
      connected.check,
      check('skip', 'temporal', `namespace ${settings.namespace}`, why),
      check('skip', 'temporal', 'search attributes', why),
      check('skip', 'webhook', 'endpoints', why),
    ];
  }
  const { connection } = connected;
  try {
    const [temporal, webhooks] = await Promise.all([temporalChecks(connection, settings, codec), registeredWebhooks(connection, settings, env)]);
    return [connected.check, ...temporal, ...webhooks];
  } finally {
    await connection.close().catch(() => undefined);
  }
}

async function registeredWebhooks(connection: Connection, settings: TemporalSettings, env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  // The registry's memo is sealed: without the keys it cannot be read.
  if (!settings.dataConverter) return [check('skip', 'webhook', 'endpoints', 'not checked: no payload keys to read the registry with')];
  const client = new Client({ connection, namespace: settings.namespace, dataConverter: settings.dataConverter });
  let endpoints: WebhookEndpoint[];
  try {
    endpoints = await bounded(listWebhookEndpoints(new TemporalTransport(client, settings.taskQueue)), 'the webhook endpoints');
  } catch (err) {
    return [check('warn', 'webhook', 'endpoints', `could not be listed (${firstLine(err)})`)];
  }
  return webhookChecks(endpoints, webhookAddressPolicyFromEnv(env));
}

// No borders: one row per check, read like `kubectl get`; a row whose first column is empty continues the one above.
const PLAIN = Object.fromEntries(
  [
    'top',
    'top-mid',
    'top-left',
    'top-right',
    'bottom',
    'bottom-mid',
    'bottom-left',
    'bottom-right',
    'left',
    'left-mid',
    'mid',
    'mid-mid',
    'right',
    'right-mid',
  ].map((c) => [c, '']),
);

function doctorTable(checks: DoctorCheck[]): string {
  // Wrapped to the terminal (a pipe gets a fixed width); nothing is cut, a long path or URL is split.
  const width = Math.max(100, Math.min(process.stdout.columns ?? 120, 240));
  const names = checks.map((c) => `${c.area}: ${c.subject}`);
  const name = Math.min(48, Math.max(...names.map((n) => n.length)));
  const found = width - 4 - name - 4;
  const t = new Table({
    head: ['', 'check', 'found — what to do'],
    colWidths: [4, name, found],
    chars: { ...PLAIN, middle: '  ' },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  for (const [i, c] of checks.entries())
    t.push([STATUS_LABEL[c.status], wrapTo(names[i]!, name), wrapTo(c.fix ? `${c.message} — ${c.fix}` : c.message, found)]);
  // Padded cells end in spaces: lines end where their text does.
  return t
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
}

/** Lines of at most `width` characters, broken between words, and inside a word longer than a line. */
function wrapTo(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    for (let rest = word; rest; rest = rest.slice(width)) {
      const piece = rest.slice(0, width);
      if (line && line.length + 1 + piece.length <= width) line += ` ${piece}`;
      else {
        if (line) lines.push(line);
        line = piece;
      }
    }
  }
  if (line) lines.push(line);
  return lines.join('\n');
}
