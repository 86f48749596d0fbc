// A rolling deploy on the production shape (issue 28). The old build, the first of one generation
// (OLD_BUILD: an unversioned worker, with its log watcher), serves authorizations in every stage; the
// new build's workers (this checkout, with AUTHCAP_BUILD_ID: Temporal's worker versioning) come up
// beside it and get no task until the operator makes their version current with `authcap deployment
// set-current`; then every workflow moves to them at its next task (auto-upgrade), the old worker
// finishes the short work it holds and is stopped, and the long ones (the log watcher's slice) move
// by their heartbeat. Every authorization ends as driven, the audit is clean, and no workflow task
// failed anywhere in the namespace: histories the old build began replay on the new one.
import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerProcess } from '../../devstack/appProcesses.js';
import type { ManagedProcess } from '../../devstack/process.js';
import { chainWatcherWorkflowId } from '../../domain/chainWatcher.js';
import { parseResourceId } from '../../domain/ids.js';
import { DEFAULT_TASK_QUEUE } from '../../runtime/temporal.js';
import { describeDeployment } from '../../runtime/workerDeployment.js';
import { audit } from '../faults/audit.js';
import { captureInBackground, createStored, sign } from '../faults/drive.js';
import { operatorTemporal } from './world.js';
import { eventually, sleep, startWorld, type World } from '../faults/harness.js';
import { buildOfCommit, startBuiltWorker } from './oldBuild.js';

/** The first build of one generation (issue 36): what production runs before this rollout. */
const OLD_BUILD = '2b8b7ff7ad63a5a3941346750cbb2c1c53aefb8f';
const NEW_BUILD = 'rolling-next';
const NETWORK = 'eip155:31337';
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

describe('a rolling deploy: the old build and the new side by side, then the old one drained', () => {
  let world: World;
  let oldBuildDir: string;
  let connection: Connection;
  let temporal: Client;
  beforeAll(async () => {
    // Before the cluster: building takes a while the first time, and nothing waits on it meanwhile.
    oldBuildDir = await buildOfCommit(OLD_BUILD);
    // No worker yet: the case starts the old build's itself. The watcher on, as production runs it.
    world = await startWorld({ temporal: 'postgres', workers: 0, validitySeconds: 600, env: { AUTHCAP_WATCH: '1' } });
    ({ connection, temporal } = await operatorTemporal(world));
  }, 300_000);
  afterAll(async () => {
    await connection?.close();
    await world?.stop();
  });

  const logTo = (name: string) => {
    const file = createWriteStream(join(world.stateDir, `${name}.log`), { flags: 'a' });
    file.on('error', () => undefined);
    return (chunk: string) => void file.write(chunk);
  };
  /** The operator CLI, as an operator runs it against this cluster (its certificate is in process.env). */
  const authcap = async (...args: string[]) =>
    (
      await run(process.execPath, [join(root, 'bin', 'authcap.mjs'), ...args], {
        cwd: root,
        env: { ...process.env, TEMPORAL_ADDRESS: world.temporal.address, TEMPORAL_NAMESPACE: world.temporal.namespace },
      })
    ).stdout;
  /** `call` until it answers (Temporal learns of a version a moment after its workers poll), else its last error. */
  const retried = async <T>(call: () => Promise<T>, timeoutMs: number): Promise<T> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await call();
      } catch (err) {
        if (Date.now() > until) throw err;
        await sleep(1_000);
      }
    }
  };
  const ownedBy = (proc: ManagedProcess) => (identity: string | null | undefined) => identity?.startsWith(`${proc.child.pid}@`) ?? false;

  /**
   * Every workflow task of every workflow in the namespace: which worker took it (its completion names
   * it: a task started for an update may be recorded without) and when it started, and each one that
   * failed or timed out.
   */
  const workflowTasks = async () => {
    const taken: { workflowId: string; identity: string; at: number }[] = [];
    const failed: string[] = [];
    for await (const w of temporal.workflow.list()) {
      const history = await temporal.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
      const startedAt = new Map<number, number>();
      for (const e of history.events ?? []) {
        const at = tsToMs(e.eventTime);
        if (e.workflowTaskStartedEventAttributes) startedAt.set(Number(e.eventId), at);
        const completed = e.workflowTaskCompletedEventAttributes;
        if (completed) taken.push({ workflowId: w.workflowId, identity: completed.identity ?? '', at: startedAt.get(Number(completed.startedEventId)) ?? at });
        const failure = e.workflowTaskFailedEventAttributes;
        if (failure) failed.push(`${w.workflowId} (${w.type}): failed on ${failure.identity}: ${failure.cause} ${failure.failure?.message ?? ''}`);
        if (e.workflowTaskTimedOutEventAttributes) failed.push(`${w.workflowId} (${w.type}): timed out (${e.workflowTaskTimedOutEventAttributes.timeoutType})`);
      }
    }
    return { taken, failed };
  };

  /**
   * Short activities a worker has started and not finished, across every open workflow. The long ones
   * (a log watcher's or a webhook dispatcher's slice of minutes) are not waited for: they move to
   * another worker by their heartbeat once this one stops, and go on from where it heartbeated.
   */
  const activitiesHeldBy = async (proc: ManagedProcess) => {
    const held: string[] = [];
    for await (const w of temporal.workflow.list({ query: `ExecutionStatus = 'Running' AND WorkflowType = 'authorizationWorkflow'` })) {
      const described = await temporal.workflow.getHandle(w.workflowId, w.runId).describe();
      // PENDING_ACTIVITY_STATE_STARTED: a worker holds it.
      for (const a of described.raw.pendingActivities ?? [])
        if (a.state === 2 && ownedBy(proc)(a.lastWorkerIdentity)) held.push(`${w.workflowId}: ${a.activityType?.name}`);
    }
    return held;
  };

  it('every authorization finishes as driven, the audit is clean, and no workflow task fails', async () => {
    const merchantTxBefore = await world.publicClient.getTransactionCount({ address: world.merchant.address });
    const oldWorker = await startBuiltWorker(oldBuildDir, world.workerEnv, logTo('worker-old-build'));
    world.workers.push(oldWorker);

    // On the old build: drafts waiting for the payer, stored ones, two captured to the end.
    const drafts = [];
    for (let i = 0; i < 3; i += 1) {
      const payer = world.payers[i]!;
      drafts.push({
        payer,
        draft: await world.client.authorizations.create({ orderId: `rolling-draft-${Date.now()}-${i}`, payer: payer.address, amount: '0.01' }),
      });
    }
    const stored: string[] = [];
    for (let i = 3; i < 11; i += 1) stored.push(await createStored(world, i));
    const [capturedEarly, inFlight, capturedLate, voidedLate] = [stored.slice(0, 2), stored.slice(2, 6), stored[6]!, stored[7]!];
    for (const id of capturedEarly) expect((await world.client.authorizations.capture(id, { waitMs: 60_000 })).authorization.state).toBe('captured');

    // The new build beside it: two workers of version NEW_BUILD, polling but given nothing yet.
    const newEnv = { ...world.workerEnv, AUTHCAP_BUILD_ID: NEW_BUILD };
    const newWorkers = [await startWorkerProcess(newEnv, logTo('worker-new-1')), await startWorkerProcess(newEnv, logTo('worker-new-2'))];
    world.workers.push(...newWorkers);
    const registered = await eventually(
      () => describeDeployment(temporal.workflowService, world.temporal.namespace, DEFAULT_TASK_QUEUE),
      (d) => d?.versions.some((v) => v.buildId === NEW_BUILD) ?? false,
      60_000,
    );
    expect(registered?.current, 'no version is current before the operator says so').toBeNull();
    // The watcher runs on the old build meanwhile (it started it): the network stays watched through the rollout.
    const watcherBefore = await eventually(
      () => temporal.workflow.getHandle(chainWatcherWorkflowId(DEFAULT_TASK_QUEUE, NETWORK)).describe(),
      (d) => d.raw.pendingActivities?.[0]?.state === 2,
      60_000,
    );
    expect(ownedBy(oldWorker)(watcherBefore?.raw.pendingActivities?.[0]?.lastWorkerIdentity)).toBe(true);

    // Captures in flight on the old build as the operator switches: the node answers slowly (2 s a
    // call) until the switch is made, so each is part-way through on the old build when it lands.
    world.proxy.set('stall', 1, 2_000);
    const captures = inFlight.map((id) => captureInBackground(world, id));
    await sleep(500);
    const switchAsked = Date.now();
    const switched = await retried(async () => JSON.parse(await authcap('deployment', 'set-current', NEW_BUILD, '--json')) as unknown, 60_000);
    const switchDone = Date.now();
    world.proxy.clear();
    expect(switched).toEqual({ deploymentName: DEFAULT_TASK_QUEUE, current: NEW_BUILD, previous: null });
    const status = JSON.parse(await authcap('deployment', '--json')) as { current: string; pollers: { identity: string; buildId: string | null }[] };
    expect(status.current).toBe(NEW_BUILD);
    expect(status.pollers.filter((p) => ownedBy(oldWorker)(p.identity)).map((p) => p.buildId)).toContain(null);
    expect(status.pollers.filter((p) => newWorkers.some((w) => ownedBy(w)(p.identity))).map((p) => p.buildId)).toContain(NEW_BUILD);

    // After the switch, all on the new build: the drafts signed (one voided instead), the rest captured or voided.
    const signedLate: string[] = [];
    for (const { payer, draft } of drafts.slice(0, 2))
      signedLate.push((await world.client.authorizations.sign(draft.id, sign(draft.typedData, payer.privateKey as Hex))).id);
    await world.client.authorizations.void(drafts[2]!.draft.id, { reason: 'order cancelled mid-rollout' });
    await world.client.authorizations.void(voidedLate, { reason: 'order cancelled mid-rollout' });
    const moreCaptures = [capturedLate, ...signedLate].map((id) => captureInBackground(world, id));

    // Drained: the old worker holds no activity any more; then it is stopped as a deploy stops it (SIGTERM).
    const held = await eventually(
      () => activitiesHeldBy(oldWorker),
      (list) => list.length === 0,
      120_000,
    );
    expect(held, 'activities the old worker still holds').toEqual([]);
    // With a deploy's grace (Kubernetes gives 30 s): a worker shutting down finishes its polls first.
    await oldWorker.stop(30_000);
    expect(await oldWorker.exited, 'the old worker exits cleanly').toBe(0);

    await Promise.all([...captures, ...moreCaptures]);
    const expected = new Map<string, string>([
      ...[...capturedEarly, ...inFlight, capturedLate, ...signedLate].map((id) => [id, 'captured'] as const),
      [voidedLate, 'voided'],
      [drafts[2]!.draft.id, 'voided'],
    ]);
    const finals = await Promise.all(
      [...expected.keys()].map((id) =>
        eventually(
          () => world.client.authorizations.get(id),
          (a) => a.state === expected.get(id),
          180_000,
        ),
      ),
    );
    expect(finals.map((a) => a?.state)).toEqual([...expected.values()]);
    const result = await audit(world, [...expected.keys()], { caseName: 'pg rolling deploy', merchantTxBefore });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });

    // The watcher the old build started moved with the rest: its slice now runs on a new worker.
    const watcher = await eventually(
      () => temporal.workflow.getHandle(chainWatcherWorkflowId(DEFAULT_TASK_QUEUE, NETWORK)).describe(),
      (d) => d.raw.pendingActivities?.[0]?.state === 2 && newWorkers.some((w) => ownedBy(w)(d.raw.pendingActivities?.[0]?.lastWorkerIdentity)),
      120_000,
    );
    expect(newWorkers.some((w) => ownedBy(w)(watcher?.raw.pendingActivities?.[0]?.lastWorkerIdentity))).toBe(true);

    // Routing: no task of the new build started before the switch, none of the old after it (a
    // moment's grace for one the old worker took as the switch was being made), and none failed.
    const tasks = await workflowTasks();
    expect(tasks.failed, 'failed or timed-out workflow tasks').toEqual([]);
    const byOld = tasks.taken.filter((t) => ownedBy(oldWorker)(t.identity));
    const byNew = tasks.taken.filter((t) => newWorkers.some((w) => ownedBy(w)(t.identity)));
    const byNeither = tasks.taken.filter((t) => !byOld.includes(t) && !byNew.includes(t));
    expect(byNeither, 'workflow tasks taken by neither build').toEqual([]);
    expect(byOld.length).toBeGreaterThan(0);
    expect(byNew.filter((t) => t.at < switchAsked - 1_000)).toEqual([]);
    expect(byOld.filter((t) => t.at > switchDone + 2_000)).toEqual([]);
    // The captures in flight, and the ones driven after the switch, began on the old build and moved to the new one mid-life.
    const buildsOf = (id: string) => {
      const tasksOf = tasks.taken.filter((t) => t.workflowId === parseResourceId(id)!.workflowId);
      return [...new Set(tasksOf.map((t) => (ownedBy(oldWorker)(t.identity) ? 'old' : 'new')))].sort();
    };
    for (const id of [...inFlight, ...drafts.map((d) => d.draft.id), capturedLate, voidedLate]) expect(buildsOf(id), id).toEqual(['new', 'old']);
  });
});
