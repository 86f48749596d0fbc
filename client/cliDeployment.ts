// `authcap deployment`: the rolling deploy of workers with Temporal's worker versioning
// (runtime/workerDeployment.ts). `deployment` shows which version workflow tasks go to, every version
// with its drainage, and who polls each queue (an unversioned worker shows as "unversioned");
// `deployment set-current <build id>` moves every workflow task to that version's workers.
import { Connection, type WorkflowService } from '@temporalio/client';
import proto, { type temporal } from '@temporalio/proto';
import Table from 'cli-table3';
import { AuthcapError } from '../domain/errors.js';
import { followTaskQueue } from '../domain/taskQueues.js';
import { loadTemporalSettings } from '../runtime/temporal.js';
import { deploymentNameOf, describeDeployment, setCurrentVersion } from '../runtime/workerDeployment.js';
import type { Settings } from '../runtime/settings/catalog.js';

type Values = { json?: boolean };

export async function deploymentCommand(
  values: Values,
  positionals: string[],
  settings: Pick<Settings<'cli'>, 'AUTHCAP_DEPLOYMENT_NAME' | 'AUTHCAP_TASK_QUEUE'>,
  out: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const temporalSettings = loadTemporalSettings({}, env);
  const { namespace, taskQueue } = temporalSettings;
  const deploymentName = deploymentNameOf(settings, taskQueue);
  const connection = await Connection.connect(temporalSettings.connectionOptions);
  try {
    const service = connection.workflowService;
    if (positionals[1] === 'set-current') {
      const buildId = positionals[2];
      if (!buildId) throw new AuthcapError('validation_error', 'deployment set-current needs the build id to make current');
      const previous = await setCurrentVersion(service, namespace, { deploymentName, buildId }, `authcap-cli@${settings.AUTHCAP_TASK_QUEUE}`).catch((err) => {
        // gRPC NOT_FOUND: Temporal learns of a version from its workers' polls.
        if ((err as { code?: number }).code !== 5) throw err;
        throw new AuthcapError('not_found', `no worker of version ${buildId} has polled deployment ${deploymentName}: start its workers first`);
      });
      if (values.json) out(JSON.stringify({ deploymentName, current: buildId, previous }, null, 2));
      else out(`deployment ${deploymentName}: ${buildId} is current (before: ${previous ?? 'unversioned workers'})`);
      return 0;
    }
    if (positionals[1] !== undefined) throw new AuthcapError('validation_error', `unknown deployment command ${positionals[1]}`);
    const status = await describeDeployment(service, namespace, deploymentName);
    const { TASK_QUEUE_TYPE_WORKFLOW: workflow, TASK_QUEUE_TYPE_ACTIVITY: activity } = proto.temporal.api.enums.v1.TaskQueueType;
    const pollers = [
      ...(await pollersOf(service, namespace, taskQueue, [workflow, activity])),
      ...(await pollersOf(service, namespace, followTaskQueue(taskQueue), [activity])),
    ];
    if (values.json) {
      out(JSON.stringify({ ...(status ?? { deploymentName, current: null, ramping: null, versions: [] }), pollers }, null, 2));
      return 0;
    }
    out(
      `deployment ${deploymentName}: workflow tasks go to ${status?.current ?? 'unversioned workers'}${status?.ramping ? `, ${status.ramping.percentage}% to ${status.ramping.buildId ?? 'unversioned workers'}` : ''}`,
    );
    const table = (head: string[], rows: string[][]) => {
      const t = new Table({ head, style: { head: [], border: [] } });
      t.push(...rows);
      return t.toString();
    };
    if (status?.versions.length)
      out(
        table(
          ['version', 'status', 'drainage', 'created'],
          status.versions.map((v) => [v.buildId, v.status, v.drainage ?? '—', v.createdAt ?? '—']),
        ),
      );
    out(
      table(
        ['queue', 'poller', 'version', 'last poll'],
        pollers.map((p) => [p.queue, p.identity, p.buildId ?? 'unversioned', p.lastPoll ?? '—']),
      ),
    );
    return 0;
  } finally {
    await connection.close();
  }
}

/** Who polled a queue in the last minutes, by version. */
async function pollersOf(service: WorkflowService, namespace: string, queue: string, types: temporal.api.enums.v1.TaskQueueType[]) {
  const { TaskQueueType } = proto.temporal.api.enums.v1;
  const rows: { queue: string; identity: string; buildId: string | null; lastPoll: string | null }[] = [];
  for (const taskQueueType of types) {
    const { pollers } = await service.describeTaskQueue({ namespace, taskQueue: { name: queue }, taskQueueType });
    const kind = taskQueueType === TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW ? 'workflow' : 'activity';
    for (const p of pollers ?? [])
      rows.push({
        queue: `${queue} (${kind})`,
        identity: p.identity ?? '',
        buildId: p.deploymentOptions?.buildId || null,
        lastPoll: p.lastAccessTime?.seconds ? new Date(Number(p.lastAccessTime.seconds) * 1000).toISOString() : null,
      });
  }
  return rows;
}
