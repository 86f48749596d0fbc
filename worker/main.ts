// `npm run worker`: one worker process against the configured Temporal and chain. Run several for scale.
import { Runtime, DefaultLogger } from '@temporalio/worker';
import { loadTemporalSettings } from '../runtime/temporal.js';
import { chainConfigFromEnv, watcherConfigFromEnv } from './config.js';
import { createAuthcapWorker } from './createWorker.js';

Runtime.install({ logger: new DefaultLogger((process.env.AUTHCAP_LOG_LEVEL as 'INFO' | undefined) ?? 'WARN') });
const temporal = loadTemporalSettings();
const chain = chainConfigFromEnv();
const stateDir = process.env.AUTHCAP_STATE_DIR ?? '.authcap';
const worker = await createAuthcapWorker({ temporal, chain, watcher: watcherConfigFromEnv(chain.rpcUrl, stateDir) });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void worker.shutdown());
console.log(`authcap worker: task queue ${temporal.taskQueue} on ${temporal.connectionOptions.address} (${temporal.namespace})`);
await worker.run();
await worker.shutdown();
