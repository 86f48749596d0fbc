// What a Temporal client WITHOUT the codec key can do with sealed payloads it did not make: read them
// out of a workflow's history byte for byte (getWorkflowExecutionHistory), then send them elsewhere
// as they are: as another workflow's start input, update or signal, or as an activity's result from
// a poller of its own on a worker's task queue. Every call here is a raw `workflowService` call: no
// data converter, no codec, nothing decoded or re-sealed on the way.
import { SUITE_LONG_POLL_EXPIRY_SECONDS } from './suiteLongPolls.js';
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Client } from '@temporalio/client';
import proto, { type temporal } from '@temporalio/proto';
import { parseEventLogs, type Address, type Hex } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { call, tokens, type World } from './refunds.js';
import { sleep } from './lifecycle.js';

export type Payload = temporal.api.common.v1.IPayload;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const { EventType } = proto.temporal.api.enums.v1;
const ENCRYPTED = 'binary/encrypted';
const IDENTITY = 'copied-payloads-test';

const text = (bytes: Uint8Array | null | undefined) => new TextDecoder().decode(bytes ?? new Uint8Array());

/** Whether a payload is sealed by the codec (and so cannot have been made by a keyless client). */
export function isSealed(payload: Payload): boolean {
  return text(payload.metadata?.encoding) === ENCRYPTED;
}

/** Copies the payloads byte for byte (fresh buffers: nothing shared with the history read). */
function copy(payloads: Payload[]): Payload[] {
  return payloads.map((p) => ({
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, new Uint8Array(v)])),
    data: new Uint8Array(p.data ?? new Uint8Array()),
  }));
}

function sealedOrFail(payloads: Payload[] | null | undefined, what: string): Payload[] {
  expect(payloads?.length, `${what}: payloads in the history`).toBeGreaterThan(0);
  expect(payloads!.every(isSealed), `${what}: every payload sealed by the codec (what a keyless client cannot make itself)`).toBe(true);
  return copy(payloads!);
}

/** Every event of a workflow's run (its latest run without `runId`), as stored: payloads still sealed. */
export async function rawHistory(client: Client, workflowId: string, runId?: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, ...(runId ? { runId } : {}) },
      nextPageToken,
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return events;
}

/** The run's start input (WorkflowExecutionStarted), sealed, copied. */
export async function copiedStartInput(client: Client, workflowId: string, runId?: string): Promise<Payload[]> {
  const started = (await rawHistory(client, workflowId, runId)).find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  return sealedOrFail(started?.workflowExecutionStartedEventAttributes?.input?.payloads, `${workflowId}'s start input`);
}

/** The arguments of the first update named `name` the workflow accepted, sealed, copied. */
export async function copiedUpdateArgs(client: Client, workflowId: string, name: string, runId?: string): Promise<Payload[]> {
  const accepted = (await rawHistory(client, workflowId, runId)).find(
    (e) =>
      e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED &&
      e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === name,
  );
  return sealedOrFail(accepted?.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads, `${workflowId}'s ${name} update`);
}

/** The result of the first completed activity of type `activityType`, sealed, copied. */
export async function copiedActivityResult(client: Client, workflowId: string, activityType: string, runId?: string): Promise<Payload[]> {
  const events = await rawHistory(client, workflowId, runId);
  const scheduled = new Set(
    events
      .filter(
        (e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && e.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
      )
      .map((e) => String(e.eventId)),
  );
  const completed = events.find(
    (e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED && scheduled.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)),
  );
  return sealedOrFail(completed?.activityTaskCompletedEventAttributes?.result?.payloads, `${workflowId}'s ${activityType} result`);
}

/** The event types of a run, by name (EVENT_TYPE_…), read without the keys. */
export async function rawEventTypes(client: Client, workflowId: string, runId?: string): Promise<string[]> {
  return (await rawHistory(client, workflowId, runId)).map((e) => EventType[e.eventType ?? 0] ?? String(e.eventType));
}

// --- sending copies ------------------------------------------------------------------------------

/** Starts a workflow with the payloads as its input; its run id. */
export async function startWithPayloads(
  client: Client,
  options: { workflowId: string; workflowType: string; taskQueue: string; input: Payload[] },
): Promise<string> {
  const started = await client.workflowService.startWorkflowExecution({
    namespace: client.options.namespace,
    workflowId: options.workflowId,
    workflowType: { name: options.workflowType },
    taskQueue: { name: options.taskQueue },
    input: { payloads: options.input },
    identity: IDENTITY,
    requestId: randomUUID(),
  });
  return started.runId!;
}

export async function signalWithPayloads(client: Client, workflowId: string, signalName: string, payloads: Payload[]): Promise<void> {
  await client.workflowService.signalWorkflowExecution({
    namespace: client.options.namespace,
    workflowExecution: { workflowId },
    signalName,
    input: { payloads },
    identity: IDENTITY,
    requestId: randomUUID(),
  });
}

/** What the server answered a raw update: accepted, rejected (with the failure's type), or refused outright (a closed workflow). */
export interface RawUpdateOutcome {
  accepted: boolean;
  /** The workflow's rejection (its validator), or the failed outcome of a completed update. */
  failureType?: string;
  failureMessage?: string;
  /** The call itself failed (no such running workflow, say): nothing reached a workflow. */
  error?: string;
}

/** Sends an update whose arguments are the payloads, and waits until it is accepted or rejected. */
export async function updateWithPayloads(client: Client, workflowId: string, name: string, payloads: Payload[]): Promise<RawUpdateOutcome> {
  try {
    const answer = await client.workflowService.updateWorkflowExecution({
      namespace: client.options.namespace,
      workflowExecution: { workflowId },
      request: { meta: { updateId: `copied-${name}-${randomUUID()}`, identity: IDENTITY }, input: { name, args: { payloads } } },
      // UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED: answered once accepted or rejected.
      waitPolicy: { lifecycleStage: proto.temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED },
    });
    const failure = answer.outcome?.failure;
    if (failure) return { accepted: false, failureType: failure.applicationFailureInfo?.type ?? undefined, failureMessage: failure.message ?? undefined };
    return { accepted: true };
  } catch (err) {
    return { accepted: false, error: String((err as Error)?.message ?? err) };
  }
}

// --- a workflow's outcome, read without the keys -------------------------------------------------

export interface RunOutcome {
  status: string;
  /** The failure's type, when the run failed (an ApplicationFailure's type, as it says in history). */
  failureType?: string;
  eventTypes: string[];
}

/** Waits (at most `timeoutMs`) for the run to close; its status (WORKFLOW_EXECUTION_STATUS_…) and its history's event types. */
export async function runOutcome(client: Client, workflowId: string, runId: string, timeoutMs = 10_000): Promise<RunOutcome> {
  const { WorkflowExecutionStatus } = proto.temporal.api.enums.v1;
  const deadline = Date.now() + timeoutMs;
  let status = 0;
  for (;;) {
    const described = await client.workflowService.describeWorkflowExecution({ namespace: client.options.namespace, execution: { workflowId, runId } });
    status = described.workflowExecutionInfo?.status ?? 0;
    if (status !== WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING || Date.now() > deadline) break;
    await sleep(250);
  }
  const events = await rawHistory(client, workflowId, runId);
  const failed = events.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED)?.workflowExecutionFailedEventAttributes?.failure;
  let failureType: string | undefined;
  for (let f = failed; f && !failureType; f = f.cause) failureType = f.applicationFailureInfo?.type ?? undefined;
  return {
    status: WorkflowExecutionStatus[status] ?? String(status),
    ...(failureType ? { failureType } : {}),
    eventTypes: events.map((e) => EventType[e.eventType ?? 0] ?? String(e.eventType)),
  };
}

/** What a run's history must not hold when its start was refused: anything it did. */
export const ACTED = /ACTIVITY|TIMER|SIGNAL_EXTERNAL|REQUEST_CANCEL_EXTERNAL|CHILD_WORKFLOW|PROPERTIES_MODIFIED|MARKER|UPDATE_ACCEPTED|CONTINUED_AS_NEW/;

/** Ends the run `runId` of `workflowId` if it still runs (a squatter a test started): nothing else. */
export async function terminateRun(client: Client, workflowId: string, runId: string, reason: string): Promise<void> {
  await client.workflowService
    .terminateWorkflowExecution({ namespace: client.options.namespace, workflowExecution: { workflowId, runId }, reason, identity: IDENTITY })
    .catch(() => undefined);
}

// --- the chain's word on a captured or refunded resource ----------------------------------------

/**
 * The receipt of `hash`, and whether it is a successful transaction of the token holding
 * AuthorizationUsed(authorizer, nonce) and the Transfer logs it made.
 */
export async function tokenReceipt(world: World, hash: Hex) {
  const receipt = await world.publicClient.getTransactionReceipt({ hash }).catch(() => undefined);
  if (receipt?.status !== 'success') return { found: false as const, used: [], transfers: [] };
  const tokenLogs = receipt.logs.filter((l) => l.address.toLowerCase() === world.tokenAddress.toLowerCase());
  const used = parseEventLogs({ abi: tokenAbi, logs: tokenLogs, eventName: 'AuthorizationUsed' }).map((l) => ({
    authorizer: l.args.authorizer.toLowerCase(),
    nonce: l.args.nonce.toLowerCase(),
  }));
  const transfers = parseEventLogs({ abi: tokenAbi, logs: tokenLogs, eventName: 'Transfer' }).map((l) => ({
    from: l.args.from.toLowerCase(),
    to: l.args.to.toLowerCase(),
    value: l.args.value,
  }));
  return { found: true as const, used, transfers };
}

export async function nonceUsed(world: World, authorizer: Address, nonce: Hex): Promise<boolean> {
  return (await world.publicClient.readContract({
    address: world.tokenAddress,
    abi: tokenAbi,
    functionName: 'authorizationState',
    args: [authorizer, nonce],
  })) as boolean;
}

/** GET /v1/refunds/<id> until it is no longer pending (at most `timeoutMs`); the last answer. */
export async function settledRefund(world: World, refundId: string, timeoutMs = 45_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(world, 'GET', `/v1/refunds/${encodeURIComponent(refundId)}`);
    expect(res.status, `GET refund ${refundId}: ${JSON.stringify(res.body)}`).toBe(200);
    if (res.body.state !== 'pending' || Date.now() > deadline) return res.body;
    await sleep(300);
  }
}

/**
 * A succeeded refund's transaction is on the chain and pays `payer` its amount from the merchant
 * (and it is not `notHash`, another payment's transaction). A refund not succeeded claims nothing.
 * Soft: the test goes on to show where the money went.
 */
export async function expectRefundBackedByChain(
  world: World,
  refund: { state: string; amount: string; transactionHash: Hex | null },
  payer: Address,
  what: string,
  notHash?: Hex,
): Promise<void> {
  if (refund.state !== 'succeeded') return;
  expect.soft(refund.transactionHash, `${what}: succeeded with a transaction`).toBeTruthy();
  if (!refund.transactionHash) return;
  if (notHash) expect.soft(refund.transactionHash.toLowerCase(), `${what}: succeeded with another payment's transaction`).not.toBe(notHash.toLowerCase());
  const receipt = await tokenReceipt(world, refund.transactionHash);
  expect.soft(receipt.transfers, `${what}: the Transfer logs of its transaction ${refund.transactionHash}`).toContainEqual({
    from: world.merchant.toLowerCase(),
    to: payer.toLowerCase(),
    value: tokens(refund.amount),
  });
}

// --- a rogue follower: a keyless poller on a worker's activity task queue -------------------------

export interface RogueTask {
  workflowId: string;
  activityType: string;
  attempt: number;
}

export interface RogueFollower {
  /** The identity its polls carry (the server lists it among the queue's pollers). */
  identity: string;
  /** Tasks it answered with the copied result. */
  answered: RogueTask[];
  /** Tasks it took and handed back at once (failed, retryable: the activity runs again, on a worker). */
  handedBack: RogueTask[];
  /** Polls started, polls that ended empty (expired), polls that failed (the last errors). */
  stats: { polls: number; empty: number; errors: string[] };
  /** Resolves once every worker poll open when the rogue started has expired and been renewed: from then on the rogue's oldest polls are matched first. */
  ripe(): Promise<void>;
  /** Stops polling: aborts the open polls, hands back a task taken meanwhile, waits for every poll to end. */
  stop(): Promise<void>;
  /** One line saying what it did, for assertion messages. */
  describe(): string;
}

export interface RogueFollowerOptions {
  taskQueue: string;
  /** The activity type it answers. */
  activityType: string;
  /** The workflows whose tasks it answers (asked when a task arrives): every other task is handed back. */
  targets: (workflowId: string) => boolean;
  /** The result it answers with (asked when a task arrives): payloads copied from another workflow's history. */
  result: () => Payload[];
  /** A new poll every this long (each stays open until it gets a task or expires). */
  staggerMs?: number;
  /** However the test ends, the rogue stops by itself after this long. */
  maxLifetimeMs: number;
}

/**
 * The suite's server answers a poll that found nothing after this long (matching.longPollExpirationInterval,
 * test/support/suiteLongPolls.ts) and a worker then polls again; the matching service hands a task to the
 * poll that has waited longest.
 */
const LONG_POLL_EXPIRY_MS = SUITE_LONG_POLL_EXPIRY_SECONDS * 1_000;

/**
 * A poller WITHOUT the codec key on a worker's task queue (as anyone with access to the Temporal
 * frontend could run): it answers the tasks of `activityType` of its target workflows at once with
 * `result`, copied from another workflow's history, instead of running the activity; every other
 * task it takes it hands back. It opens a new poll every `staggerMs`: once the worker's polls open
 * at its start have expired and been renewed (`ripe()`), its oldest polls are older than any of the
 * worker's, and are matched first. Its identity says what it is; it stops itself after
 * `maxLifetimeMs` whatever happens, and `stop()` ends it sooner.
 */
export function startRogueFollower(client: Client, options: RogueFollowerOptions): RogueFollower {
  const identity = `ROGUE-FOLLOWER-TEST-${process.pid}-${randomUUID().slice(0, 8)} (a test's keyless poller: must not outlive its test)`;
  const answered: RogueTask[] = [];
  const handedBack: RogueTask[] = [];
  const stats = { polls: 0, empty: 0, errors: [] as string[] };
  const abort = new AbortController();
  const namespace = client.options.namespace;
  const startedAt = Date.now();
  let stopped = false;

  const handBack = (taskToken: Uint8Array) =>
    client.workflowService
      .respondActivityTaskFailed({
        namespace,
        taskToken,
        identity,
        failure: { message: 'handed back by a test poller', applicationFailureInfo: { type: 'handed_back_by_test_poller', nonRetryable: false } },
      })
      .catch(() => undefined);

  async function pollOnce(): Promise<void> {
    stats.polls += 1;
    let task: temporal.api.workflowservice.v1.IPollActivityTaskQueueResponse;
    try {
      // A long poll needs a deadline (as the SDK's workers give theirs): the server answers empty before it.
      task = await client.connection.withAbortSignal(abort.signal, () =>
        client.connection.withDeadline(Date.now() + LONG_POLL_EXPIRY_MS + 10_000, () =>
          client.workflowService.pollActivityTaskQueue({ namespace, taskQueue: { name: options.taskQueue, kind: 1 }, identity }),
        ),
      );
    } catch (err) {
      if (!stopped) stats.errors = [...stats.errors.slice(-4), String((err as Error)?.message ?? err)];
      return;
    }
    if (!task.taskToken?.length) {
      stats.empty += 1;
      return;
    }
    const seen = { workflowId: task.workflowExecution?.workflowId ?? '', activityType: task.activityType?.name ?? '', attempt: task.attempt ?? 0 };
    if (stopped || seen.activityType !== options.activityType || !options.targets(seen.workflowId)) {
      handedBack.push(seen);
      await handBack(task.taskToken);
      return;
    }
    // Answered at once: the activity never runs (nothing is sent, nothing is followed).
    await client.workflowService
      .respondActivityTaskCompleted({ namespace, taskToken: task.taskToken, identity, result: { payloads: copy(options.result()) } })
      .then(
        () => answered.push(seen),
        (err: unknown) => (stats.errors = [...stats.errors.slice(-4), `answering: ${String((err as Error)?.message ?? err)}`]),
      );
  }

  const open = new Set<Promise<void>>();
  const launch = () => {
    if (stopped) return;
    const poll = pollOnce().finally(() => open.delete(poll));
    open.add(poll);
  };
  launch();
  const stream = setInterval(launch, options.staggerMs ?? 1_000);
  const end = async () => {
    stopped = true;
    clearInterval(stream);
    abort.abort();
    while (open.size > 0) await Promise.all([...open]);
  };
  const lifetime = setTimeout(() => void end(), options.maxLifetimeMs);
  lifetime.unref();
  return {
    identity,
    answered,
    handedBack,
    stats,
    async ripe() {
      await sleep(Math.max(startedAt + LONG_POLL_EXPIRY_MS + 3_000 - Date.now(), 0));
    },
    async stop() {
      clearTimeout(lifetime);
      await end();
    },
    describe() {
      const ids = [...new Set(answered.map((t) => t.workflowId))].join(', ');
      return `the rogue poller answered ${answered.length} ${options.activityType} task(s) (${ids}), handed back ${handedBack.length}; polls ${stats.polls}, expired ${stats.empty}, errors ${stats.errors.length ? stats.errors.join(' | ') : 'none'}`;
    },
  };
}
