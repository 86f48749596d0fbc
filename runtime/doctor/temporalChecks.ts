// The doctor's Temporal checks: the server answers, the namespace exists, authcap's search attributes
// are registered with their types (what `authcap temporal-setup` makes so), workers poll the task
// queue, and the workflows already there open with these payload keys.
import { Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { searchAttributeKeys } from '../../domain/searchAttributes.js';
import { describeUnsealed, isUnsealed } from '../../domain/sealed.js';
import type { EncryptionCodec } from '../codec.js';
import type { TemporalSettings } from '../temporal.js';
import { searchAttributeGaps } from '../temporalSetup.js';
import { reasonOf } from './nodeProbe.js';
import { bounded, CALL_TIMEOUT_MS, check, firstLine, type DoctorCheck } from './report.js';

const SETUP = 'run `authcap temporal-setup` (with the same TEMPORAL_* settings)';
/** How many of the newest workflows' inputs are opened to judge the keys. */
const SAMPLE = 5;

export async function connectTemporal(settings: TemporalSettings): Promise<{ check: DoctorCheck; connection?: Connection }> {
  const address = settings.connectionOptions.address;
  const subject = `server ${address}`;
  const fix = 'check TEMPORAL_ADDRESS and its TLS / API key settings (or the temporal.toml profile), and that the server is up';
  let connection: Connection | undefined;
  try {
    connection = await bounded(
      Connection.connect({ ...settings.connectionOptions, connectTimeout: CALL_TIMEOUT_MS }),
      `Temporal at ${address}`,
      CALL_TIMEOUT_MS + 1_000,
    );
    const info = await bounded(connection.workflowService.getSystemInfo({}), `Temporal at ${address}`);
    return { connection, check: check('ok', 'temporal', subject, `answers${info.serverVersion ? ` (server ${info.serverVersion})` : ''}`) };
  } catch (err) {
    await connection?.close().catch(() => undefined);
    return { check: check('fail', 'temporal', subject, `Temporal at ${address} does not answer (${reasonOf(err)})`, fix) };
  }
}

export async function temporalChecks(connection: Connection, settings: TemporalSettings, codec: EncryptionCodec | undefined): Promise<DoctorCheck[]> {
  const { namespace } = settings;
  const namespaceCheck = await bounded(connection.workflowService.describeNamespace({ namespace }), `namespace ${namespace}`).then(
    (answer) => {
      const days = Math.round(Number(answer.config?.workflowExecutionRetentionTtl?.seconds ?? 0) / 86_400);
      return check('ok', 'temporal', `namespace ${namespace}`, `exists${days ? ` (closed workflows kept ${days} day${days === 1 ? '' : 's'})` : ''}`);
    },
    (err) =>
      (err as { code?: number }).code === 5
        ? check('fail', 'temporal', `namespace ${namespace}`, `namespace ${namespace} does not exist`, SETUP)
        : check(
            'fail',
            'temporal',
            `namespace ${namespace}`,
            `namespace ${namespace} could not be read (${firstLine(err)})`,
            'check TEMPORAL_NAMESPACE and what the API key or certificate may do',
          ),
  );
  if (namespaceCheck.status !== 'ok') {
    const why = `not checked: namespace ${namespace} is not usable`;
    return [namespaceCheck, check('skip', 'temporal', 'search attributes', why), check('skip', 'temporal', `task queue ${settings.taskQueue}`, why)];
  }
  return [
    namespaceCheck,
    ...(await Promise.all([searchAttributesCheck(connection, namespace), pollersCheck(connection, settings), sampleCheck(connection, namespace, codec)])),
  ];
}

async function searchAttributesCheck(connection: Connection, namespace: string): Promise<DoctorCheck> {
  const subject = 'search attributes';
  try {
    const { customAttributes } = await bounded(connection.operatorService.listSearchAttributes({ namespace }), 'the search attributes');
    const gaps = searchAttributeGaps(customAttributes ?? {});
    const missing = gaps.missing.map((key) => key.name);
    const wrong = gaps.wrongType.map((key) => `${key.name} (wants ${key.type})`);
    if (missing.length)
      return check('fail', 'temporal', subject, `missing: ${missing.join(', ')}; listing and finding authorizations fail without them`, SETUP);
    if (wrong.length)
      return check(
        'fail',
        'temporal',
        subject,
        `of another type: ${wrong.join(', ')}`,
        'remove them (temporal operator search-attribute remove) and run `authcap temporal-setup`',
      );
    return check('ok', 'temporal', subject, `all ${searchAttributeKeys.length} registered with their types`);
  } catch (err) {
    return check('fail', 'temporal', subject, `could not be listed (${firstLine(err)})`, 'the operator service must be reachable with these credentials');
  }
}

async function pollersCheck(connection: Connection, settings: TemporalSettings): Promise<DoctorCheck> {
  const subject = `task queue ${settings.taskQueue}`;
  try {
    const { pollers } = await bounded(
      connection.workflowService.describeTaskQueue({
        namespace: settings.namespace,
        taskQueue: { name: settings.taskQueue, kind: proto.temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      }),
      subject,
    );
    const count = pollers?.length ?? 0;
    if (count === 0)
      return check(
        'warn',
        'temporal',
        subject,
        'no worker polls it: authorizations wait until one does',
        `start the workers (npm run worker) with AUTHCAP_TASK_QUEUE=${settings.taskQueue}`,
      );
    return check('ok', 'temporal', subject, `${count} worker(s) poll it`);
  } catch (err) {
    return check('warn', 'temporal', subject, `its pollers could not be read (${firstLine(err)})`);
  }
}

/**
 * The newest workflows' inputs, opened with these keys: a round trip proves the keys work, this that
 * they are the keys the workers seal with. Plain inputs are left out (anyone may start a workflow
 * without the codec; the workers refuse those).
 */
async function sampleCheck(connection: Connection, namespace: string, codec: EncryptionCodec | undefined): Promise<DoctorCheck> {
  const subject = 'payload keys vs. Temporal';
  if (!codec) return check('skip', 'codec', subject, 'not checked: no payload keys');
  try {
    const { executions } = await bounded(connection.workflowService.listWorkflowExecutions({ namespace, pageSize: SAMPLE }), 'the newest workflows');
    const inputs = await Promise.all(
      (executions ?? []).slice(0, SAMPLE).map(async (e) => {
        const { history } = await bounded(
          connection.workflowService.getWorkflowExecutionHistory({ namespace, execution: e.execution, maximumPageSize: 1 }),
          'a workflow history',
        );
        return history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0] as Payload | undefined;
      }),
    );
    const sealed = inputs.filter((p): p is Payload => !!p && new TextDecoder().decode(p.metadata?.encoding ?? new Uint8Array()) === 'binary/encrypted');
    if (sealed.length === 0) return check('ok', 'codec', subject, 'no sealed workflow input yet to open');
    const opened = await codec.decode(sealed);
    const refused = opened.map(jsonOf).filter(isUnsealed);
    if (refused.length < sealed.length)
      return check('ok', 'codec', subject, `the newest workflows' inputs open (${sealed.length - refused.length} of ${sealed.length})`);
    const ids = [...new Set(sealed.map((p) => new TextDecoder().decode(p.metadata?.['encryption-key-id'] ?? new Uint8Array())))];
    return check(
      'fail',
      'codec',
      subject,
      `the newest workflows' inputs do not open with these keys (${describeUnsealed(refused[0]!)}; sealed with key id ${ids.join(', ')})`,
      'use the keys the workers hold; when rotating, keep the old key after the new one in AUTHCAP_CODEC_KEYS',
    );
  } catch (err) {
    return check('warn', 'codec', subject, `workflow inputs could not be read (${firstLine(err)})`);
  }
}

function jsonOf(payload: Payload): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(payload.data ?? new Uint8Array()));
  } catch {
    return undefined;
  }
}
