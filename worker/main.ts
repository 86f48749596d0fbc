// `npm run worker`: one worker process against the configured Temporal and chain. Run several for scale.
import { Runtime } from '@temporalio/worker';
import { createLogger, temporalLogger } from '../runtime/logger.js';
import { loadTemporalSettings } from '../runtime/temporal.js';
import { requireCodec } from '../runtime/codec.js';
import { workerDeployment } from './config.js';
import { createAuthcapWorker } from './createWorker.js';
import { TaskFailureTracker, trackingLogger } from './taskFailures.js';
import { cpuProfileOnSignal } from '../runtime/cpuProfiler.js';
import { settingsOrExit } from '../runtime/settings/read.js';
import { deploymentVersionOf } from '../runtime/workerDeployment.js';

// Every variable the worker reads, validated now (runtime/settings/catalog.ts): a wrong one stops the
// start with its name, and every wrong one is named at once.
const settings = settingsOrExit('worker', 'authcap worker');
cpuProfileOnSignal('worker', settings.AUTHCAP_CPU_PROFILE_DIR);

// JSON lines (pino), secrets redacted; AUTHCAP_LOG_LEVEL (default warn) decides how much. Failed
// workflow tasks are also counted and named (metric, /readyz, an error line) whatever the level.
const logger = createLogger('authcap-worker', settings.AUTHCAP_LOG_LEVEL ?? 'warn');
const taskFailures = new TaskFailureTracker((message, meta) => logger.error(meta, message));
// Temporal's default shutdown signals include SIGUSR2, which authcap keeps for CPU profiles.
Runtime.install({ logger: trackingLogger(temporalLogger(logger), taskFailures), shutdownSignals: ['SIGINT', 'SIGTERM', 'SIGQUIT'] });
// The payload keys from the settings, and Temporal's connection (@temporalio/envconfig) from this process's environment, here.
requireCodec(settings);
const temporal = loadTemporalSettings({}, process.env);
// Networks, tokens and the merchant keys' variables from the deployment file, AUTHCAP_CONFIG
// (runtime/deployment/load.ts reads it). Checked against their chains now: a
// wrong entry stops the start with its name; a node that does not answer leaves its network waiting
// (served once it answers, no restart) while the others serve.
const { policy, deployment } = await workerDeployment(settings, process.env).catch((err: Error) => {
  console.error(`authcap worker: ${err.message}`);
  process.exit(1);
});
// AUTHCAP_BUILD_ID: Temporal's worker versioning on (README: "Upgrading workflow code"); unset, unversioned.
const version = (() => {
  try {
    return deploymentVersionOf(settings, temporal.taskQueue);
  } catch (err) {
    console.error(`authcap worker: ${(err as Error).message}`);
    process.exit(1);
  }
})();
const worker = await createAuthcapWorker({
  temporal,
  policy,
  deployment,
  watch: settings.AUTHCAP_WATCH,
  metricsPort: settings.AUTHCAP_WORKER_METRICS_PORT,
  taskFailures,
  settings,
  version,
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void worker.shutdown());
console.log(
  `authcap worker: task queue ${temporal.taskQueue} on ${temporal.connectionOptions.address} (${temporal.namespace})${version ? `, version ${version.buildId} of deployment ${version.deploymentName}` : ''}${worker.metricsUrl ? `, metrics at ${worker.metricsUrl}` : ''}`,
);
await worker.run();
await worker.shutdown();
