// Temporal connection settings, shared by the worker and the client (which never import each other).
// @temporalio/envconfig reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS and API key settings and the
// temporal.toml profile, so the same code runs against the dev server, a cluster or Temporal Cloud.
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { ClientConnectConfig } from '@temporalio/envconfig';
import type { DataConverter } from '@temporalio/common';
import { codecOf } from './codec.js';
import { defaultOf, readVariable } from './settings/read.js';

/** AUTHCAP_TASK_QUEUE's default (runtime/settings/catalog.ts). */
export const DEFAULT_TASK_QUEUE = defaultOf('AUTHCAP_TASK_QUEUE');

export interface TemporalSettings {
  connectionOptions: ClientConnectConfig['connectionOptions'];
  namespace: string;
  taskQueue: string;
  /** Payload codec (encryption) shared by the worker, the client library, the API and the CLI. */
  dataConverter?: DataConverter;
}

/**
 * The connection from `env` (default this process's), through @temporalio/envconfig; `overrides` win.
 * A process entry that completes its environment (the CLI beside `npm start`) passes it here.
 */
export function loadTemporalSettings(overrides: { address?: string; namespace?: string } = {}, env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const overrideEnvVars: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) overrideEnvVars[key] = value;
  if (overrides.address) overrideEnvVars.TEMPORAL_ADDRESS = overrides.address;
  if (overrides.namespace) overrideEnvVars.TEMPORAL_NAMESPACE = overrides.namespace;
  const config = loadClientConnectConfig({ overrideEnvVars });
  return {
    connectionOptions: { ...config.connectionOptions, address: config.connectionOptions.address ?? '127.0.0.1:7233' },
    namespace: config.namespace ?? 'default',
    taskQueue: readVariable('AUTHCAP_TASK_QUEUE', env),
    dataConverter: dataConverterFromEnv(env),
  };
}

/** Payloads sealed by the codec when keys are configured (AUTHCAP_CODEC_KEYS / AUTHCAP_CODEC_KEY_FILE). */
export function dataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter | undefined {
  const codec = codecOf(env);
  return codec ? { payloadCodecs: [codec] } : undefined;
}
