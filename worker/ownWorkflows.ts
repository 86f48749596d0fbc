// The workflows a worker starts when it comes up: each network's log watcher and the webhook
// dispatchers (starting one that runs already changes nothing, so there is one of each). A versioned
// worker starts them only once its version is current: until then a workflow started on the task
// queue goes to the current version's workers, which may not know its type (a build older than the
// workflow type) and would fail its task until the rollout ends.
import type { Client } from '@temporalio/client';
import { ensureChainWatcher } from '../runtime/chainWatchers.js';
import { ensureWebhookDispatcher } from '../runtime/webhookDispatchers.js';
import { whenCurrent, type DeploymentVersion } from '../runtime/workerDeployment.js';
import { eventBridges } from './eventBridges.js';

export interface OwnWorkflowsOptions {
  taskQueue: string;
  /** The networks whose log watchers to keep running; none with AUTHCAP_WATCH off. */
  watchedNetworks: string[];
  version?: DeploymentVersion;
  log: (line: string) => void;
}

/** Starts them now, or once this worker's version is current; stop() gives up waiting (shutdown). */
export function startOwnWorkflows(client: Client, options: OwnWorkflowsOptions): { stop(): void } {
  const waiting = new AbortController();
  const { version, log } = options;
  void (async () => {
    if (version) {
      const current = await whenCurrent(client.workflowService, client.options.namespace, version, {
        signal: waiting.signal,
        onWaiting: (now) =>
          log(
            `authcap worker: version ${version.buildId} of ${version.deploymentName} is not current (workflow tasks go to ${now ?? 'unversioned workers'}): it gets tasks, and starts its log watcher and webhook dispatchers, once made current`,
          ),
        onError: (err) => log(`authcap worker: could not read worker deployment ${version.deploymentName}: ${err.message}`),
      });
      if (!current) return;
    }
    const ensureWatchers = async () => {
      for (const network of options.watchedNetworks)
        await ensureChainWatcher(client, options.taskQueue, network).catch((err: Error) =>
          log(`authcap worker: could not start the ${network} log watcher: ${err.message}`),
        );
    };
    await ensureWatchers();
    await ensureDispatchers(client, options.taskQueue, log);
    // Again now and then: a watcher that could not be started (Temporal unreachable for a moment) or
    // that ended (terminated by an operator) runs again within a minute, whichever workers are up.
    // Periodic checks are off by default while the watcher is on, so a network must not stay unwatched.
    if (!waiting.signal.aborted) {
      const timer = setInterval(() => void ensureWatchers(), WATCHERS_CHECKED_EVERY_MS);
      timer.unref();
      waiting.signal.addEventListener('abort', () => clearInterval(timer));
    }
  })();
  return { stop: () => waiting.abort() };
}

const WATCHERS_CHECKED_EVERY_MS = 60_000;

/** Every endpoint has its dispatcher, even one whose start failed after the endpoint was made, or that was terminated. */
async function ensureDispatchers(client: Client, taskQueue: string, log: (line: string) => void): Promise<void> {
  try {
    for (const endpoint of await eventBridges(client).listEndpoints()) await ensureWebhookDispatcher(client, taskQueue, endpoint.id);
  } catch (err) {
    // Temporal not reachable yet: the next worker start (or the next endpoint created) sees to it.
    log(`authcap worker: could not check the webhook dispatchers: ${(err as Error).message}`);
  }
}
