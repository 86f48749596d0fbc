// The doctor's configuration checks: every variable the worker and the API read (the catalog's own
// validation, as each process runs it at start), the deployment file (the worker's loader), and the
// payload codec's keys, with a seal-and-open round trip.
import type { Payload } from '@temporalio/common';
import { parseCodecKeys, readCodecKeyFile, requireCodec, type EncryptionCodec } from '../codec.js';
import { loadDeployment, type LoadedDeployment } from '../deployment/load.js';
import { readSettings, readVariable, SettingsError } from '../settings/read.js';
import { check, firstLine, type DoctorCheck } from './report.js';

type Env = NodeJS.ProcessEnv;

export function settingsChecks(env: Env): DoctorCheck[] {
  return (['worker', 'api'] as const).map((processName) => {
    try {
      readSettings(processName, env);
      return check('ok', 'settings', processName, `every variable the ${processName} reads is valid`);
    } catch (err) {
      if (!(err instanceof SettingsError)) throw err;
      return check(
        'fail',
        'settings',
        processName,
        err.problems.join('; '),
        `correct ${err.problems.length === 1 ? 'it' : 'them'} (docs/configuration.md lists each variable)`,
      );
    }
  });
}

export interface DeploymentOutcome {
  check: DoctorCheck;
  /** What the chain checks run on: with keys when they could be read, else without. */
  deployment?: LoadedDeployment;
  keysLoaded: boolean;
}

export function deploymentCheck(env: Env): DeploymentOutcome {
  const subject = env.AUTHCAP_CONFIG?.trim() ? `AUTHCAP_CONFIG ${env.AUTHCAP_CONFIG.trim()}` : 'AUTHCAP_CONFIG';
  try {
    const deployment = loadDeployment(env);
    const tokens = deployment.networks.reduce((n, network) => n + network.tokens.length, 0);
    const keys = new Set(deployment.networks.flatMap((n) => n.merchantPrivateKeys)).size;
    const networks = deployment.networks.map((n) => n.id).join(', ');
    return {
      deployment,
      keysLoaded: true,
      check: check('ok', 'deployment', subject, `${deployment.networks.length} network(s) (${networks}), ${tokens} token(s), ${keys} merchant key(s)`),
    };
  } catch (err) {
    const fail = check(
      'fail',
      'deployment',
      subject,
      firstLine(err),
      'correct the path or variable named (docs/configuration.md); the worker refuses to start until then',
    );
    // Without its keys (the usual mistake: a variable unset here) the networks can still be checked.
    try {
      return { deployment: loadDeployment(env, { keys: false }), keysLoaded: false, check: fail };
    } catch {
      return { keysLoaded: false, check: fail };
    }
  }
}

export interface CodecOutcome {
  check: DoctorCheck;
  codec?: EncryptionCodec;
}

/** Where the keys come from, and their ids (never the keys). */
function keyIds(env: Env): { source: string; ids: string[]; active: string } {
  const spec = readVariable('AUTHCAP_CODEC_KEYS', env);
  const keys = spec ? parseCodecKeys(spec) : readCodecKeyFile(readVariable('AUTHCAP_CODEC_KEY_FILE', env)!);
  return {
    source: spec ? 'AUTHCAP_CODEC_KEYS' : `AUTHCAP_CODEC_KEY_FILE ${readVariable('AUTHCAP_CODEC_KEY_FILE', env)}`,
    ids: [...keys.keys.keys()],
    active: keys.active,
  };
}

export async function codecCheck(env: Env): Promise<CodecOutcome> {
  const subject = 'payload keys';
  let codec: EncryptionCodec | undefined;
  try {
    codec = requireCodec(env);
  } catch (err) {
    return {
      check: check(
        'fail',
        'codec',
        subject,
        firstLine(err).replace(/^authcap: /, ''),
        'set AUTHCAP_CODEC_KEYS to the keys the workers hold (docs/production.md: keys and rotation)',
      ),
    };
  }
  if (!codec)
    return {
      check: check('warn', 'codec', subject, 'AUTHCAP_CODEC=off: payloads go to Temporal unencrypted (tests only)', 'set AUTHCAP_CODEC_KEYS in production'),
    };
  const { source, ids, active } = keyIds(env);
  // Sealed with the active key and opened again: the keys are usable, not only well-formed.
  const probe: Payload = { metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode('{"doctor":true}') };
  try {
    const [sealed] = await codec.encode([probe]);
    const [opened] = await codec.decode([sealed!]);
    if (new TextDecoder().decode(opened!.data) !== '{"doctor":true}') throw new Error('a sealed payload did not open to what was sealed');
  } catch (err) {
    return { check: check('fail', 'codec', subject, `the codec cannot seal and open a payload (${firstLine(err)})`, `check ${source}`) };
  }
  return { codec, check: check('ok', 'codec', subject, `${ids.length} key(s) from ${source} (${ids.join(', ')}; ${active} seals); a payload seals and opens`) };
}
