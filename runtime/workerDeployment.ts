// Temporal's worker versioning (Worker Deployments) as authcap runs it. With AUTHCAP_BUILD_ID set, a
// worker is one version of a deployment and gets workflow tasks only while its version is current, so
// during a rollout no task of new code reaches an old worker nor the reverse. Every workflow is
// auto-upgrade: an authorization waits for days (until validBefore), and pinning it would keep its
// build's workers alive that long; instead it moves to the current version at its next task, and a
// change to workflows/ goes behind patched() so the old branch replays. The operator makes a version
// current once its workers run (`authcap deployment set-current`, or Temporal's CLI).
import type { WorkflowService } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
// A CommonJS package: its namespaces are on the default export (types may be imported by name).
import proto, { type temporal } from '@temporalio/proto';
import { setTimeout as sleep } from 'node:timers/promises';

export type DeploymentVersion = WorkerDeploymentVersion;

const { WorkerDeploymentVersionStatus, VersionDrainageStatus } = proto.temporal.api.enums.v1;

/** The worker's version, or undefined (an unversioned worker) when AUTHCAP_BUILD_ID is unset. */
export function deploymentVersionOf(
  settings: { AUTHCAP_BUILD_ID?: string; AUTHCAP_DEPLOYMENT_NAME?: string },
  taskQueue: string,
): DeploymentVersion | undefined {
  if (!settings.AUTHCAP_BUILD_ID) return undefined;
  return { deploymentName: deploymentNameOf(settings, taskQueue), buildId: settings.AUTHCAP_BUILD_ID };
}

/** AUTHCAP_DEPLOYMENT_NAME, else the task queue: one deployment per task queue. */
export function deploymentNameOf(settings: { AUTHCAP_DEPLOYMENT_NAME?: string }, taskQueue: string): string {
  const deploymentName = settings.AUTHCAP_DEPLOYMENT_NAME ?? taskQueue;
  // Temporal joins name and build id with "." or ":" in its version strings, so a name may hold neither.
  if (/[.:]/.test(deploymentName)) throw new Error(`the task queue "${taskQueue}" cannot name a worker deployment ("." or ":"): set AUTHCAP_DEPLOYMENT_NAME`);
  return deploymentName;
}

export interface DeploymentStatus {
  deploymentName: string;
  /** The build id workflow tasks go to; null: unversioned workers (before the first version was made current). */
  current: string | null;
  ramping: { buildId: string | null; percentage: number } | null;
  versions: { buildId: string; status: string; drainage: string | null; createdAt: string | null }[];
}

/** The deployment as Temporal routes it; undefined until a worker of it has polled. */
export async function describeDeployment(service: WorkflowService, namespace: string, deploymentName: string): Promise<DeploymentStatus | undefined> {
  let info: temporal.api.deployment.v1.IWorkerDeploymentInfo | null | undefined;
  try {
    info = (await service.describeWorkerDeployment({ namespace, deploymentName })).workerDeploymentInfo;
  } catch (err) {
    // gRPC NOT_FOUND: no versioned worker of this deployment has polled yet.
    if ((err as { code?: number }).code === 5) return undefined;
    throw err;
  }
  const routing = info?.routingConfig;
  const word = (name: string | undefined, prefix: string) => (name && !name.endsWith('_UNSPECIFIED') ? name.replace(prefix, '').toLowerCase() : null);
  return {
    deploymentName,
    current: routing?.currentDeploymentVersion?.buildId || null,
    ramping: routing?.rampingVersionPercentage
      ? { buildId: routing.rampingDeploymentVersion?.buildId || null, percentage: routing.rampingVersionPercentage }
      : null,
    versions: (info?.versionSummaries ?? []).map((v) => ({
      buildId: v.deploymentVersion?.buildId ?? '',
      status: word(WorkerDeploymentVersionStatus[v.status ?? 0], 'WORKER_DEPLOYMENT_VERSION_STATUS_') ?? 'unspecified',
      drainage: v.drainageInfo ? word(VersionDrainageStatus[v.drainageInfo.status ?? 0], 'VERSION_DRAINAGE_STATUS_') : null,
      createdAt: v.createTime?.seconds ? new Date(Number(v.createTime.seconds) * 1000).toISOString() : null,
    })),
  };
}

/**
 * Routes every workflow task of the deployment's task queues to `version` from now on: new workflows
 * start there, and open ones (unversioned ones included) move there at their next task. Refused while
 * none of its workers has polled. Answers the build id that was current before (null: unversioned).
 */
export async function setCurrentVersion(service: WorkflowService, namespace: string, version: DeploymentVersion, identity: string): Promise<string | null> {
  const answer = await service.setWorkerDeploymentCurrentVersion({ namespace, deploymentName: version.deploymentName, buildId: version.buildId, identity });
  return answer.previousDeploymentVersion?.buildId || null;
}

/**
 * Resolves once `version` is the deployment's current one (false if `signal` aborts first): what a
 * worker waits for before it starts workflows of its own, whose type the current version's workers
 * might not know (a "not registered" failed task on an old worker).
 */
export async function whenCurrent(
  service: WorkflowService,
  namespace: string,
  version: DeploymentVersion,
  options: { signal: AbortSignal; intervalMs?: number; onWaiting?: (current: string | null) => void; onError?: (err: Error) => void },
): Promise<boolean> {
  let told = false;
  while (!options.signal.aborted) {
    try {
      const current = (await describeDeployment(service, namespace, version.deploymentName))?.current ?? null;
      if (current === version.buildId) return true;
      if (!told) options.onWaiting?.(current);
      told = true;
    } catch (err) {
      options.onError?.(err as Error);
    }
    // An abort ends the wait at once (it rejects; the loop then sees it).
    await sleep(options.intervalMs ?? 5_000, undefined, { signal: options.signal }).catch(() => undefined);
  }
  return false;
}
