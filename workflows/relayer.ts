// One relayer per merchant key. Every capture and cancellation transaction goes through it, and
// Temporal runs one workflow execution at a time, so account nonces are handed out in order with
// no lock and no collision, however many captures and worker processes there are.
import { useChain } from './chainHeader.js';
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  proxySinks,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import {
  isTypedRelayRequest,
  relayerNetwork,
  relayerSender,
  type InflightTransaction,
  type RelayRequest,
  type RelayResult,
  type RelayerActivities,
} from '../domain/relay.js';
import type { AuthcapSinks } from '../domain/telemetry.js';
import { relayRequestSignal, relayResultSignal } from './messages.js';

// Bounded: a node outage must not hold the relayer in one activity forever. A batch that still fails
// goes back to the queue and is tried again after a pause; the relayer itself never fails.
const relayer = proxyActivities<RelayerActivities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '3 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 20 },
});

const { telemetry } = proxySinks<AuthcapSinks>();

export interface RelayerState {
  accountNonce: number | null;
  inflight: InflightTransaction[];
  /**
   * Recent answers, so a repeated request gets the same transaction back. A workflow's memory, which
   * a termination or reset wipes: the broadcast activity also asks the chain (a call is simulated at
   * the pending block first; one whose authorization is consumed is answered, never sent again).
   */
  answered: [string, RelayResult][];
  /** Requests not yet broadcast when the previous run rolled over (continue-as-new). */
  queue?: RelayRequest[];
}

const BATCH_SIZE = 25;
const STUCK_AFTER_MS = 30_000;
const MAINTENANCE_MS = 5_000;
const REMEMBERED_ANSWERS = 2_000;
const PAUSE_AFTER_FAILURE_MS = 2_000;
/**
 * A request older than this, or made well before this relayer's execution began, was not made for
 * it: a requester asks once and at once, so such a request is a copy replayed into a relayer started
 * (or reset) again, whose memory of its answers is gone. It is refused before anything is read or signed.
 */
const REQUEST_TTL_MS = 10 * 60_000;
const BEFORE_START_SLACK_MS = 30_000;

/** Why a typed request is not acted on for its age, if it is not. */
function staleness(request: RelayRequest): string | undefined {
  if (request.issuedAt === undefined) return 'the request carries no time';
  const issued = Date.parse(request.issuedAt);
  if (!Number.isFinite(issued)) return 'the request carries no readable time';
  if (Date.now() - issued > REQUEST_TTL_MS) return 'the request is older than the relayer acts on';
  if (issued < workflowInfo().startTime.getTime() - BEFORE_START_SLACK_MS) return 'the request was made before this relayer began';
  return undefined;
}

export async function merchantRelayerWorkflow(state: RelayerState = { accountNonce: null, inflight: [], answered: [] }): Promise<void> {
  // One relayer per merchant key and network: its id names the key it sends with, and the network
  // every one of its activities runs on.
  const sender = relayerSender(workflowInfo().workflowId);
  const network = relayerNetwork(workflowInfo().workflowId);
  if (!sender || !network)
    throw ApplicationFailure.create({ type: 'validation_error', nonRetryable: true, message: 'not a relayer id: relayer-<network>-<merchant key>' });
  useChain({ network });
  let accountNonce = state.accountNonce;
  let inflight = state.inflight;
  const answered = new Map(state.answered);
  // Carried over from the last run: a rollover never drops or stalls a request already accepted.
  const queue: RelayRequest[] = [...(state.queue ?? [])];

  const reply = async (to: RelayRequest['replyTo'] | undefined, result: RelayResult) => {
    // A malformed run id would fail the relayer's workflow task (and stall every capture behind it).
    if (!to || typeof to.workflowId !== 'string' || !/^[0-9a-f-]{36}$/i.test(to.runId ?? ''))
      return void log.warn('relay result not sent: malformed replyTo', { requestId: result.requestId });
    try {
      await getExternalWorkflowHandle(to.workflowId, to.runId).signal(relayResultSignal, result);
    } catch (err) {
      // The requester finished meanwhile; its own reconciliation reads the outcome from the chain.
      log.warn('relay result not delivered', { requestId: result.requestId, error: String(err) });
    }
  };

  setHandler(relayRequestSignal, (request) => {
    // The relayer is no signing service: anything but a typed call (raw calldata, say) is answered
    // with a refusal, never queued.
    if (!isTypedRelayRequest(request)) {
      const untyped = request as Partial<RelayRequest> | undefined;
      log.warn('relay request refused: not a typed call', { requestId: String(untyped?.requestId) });
      if (typeof untyped?.requestId === 'string')
        void reply(untyped.replyTo, {
          requestId: untyped.requestId,
          failure: { code: 'relay_refused', message: 'the relayer sends only typed captures, cancellations and refunds' },
        });
      return;
    }
    const onFailureOnly = request.replyOn === 'failure';
    const earlier = answered.get(request.requestId);
    const stale = earlier ? undefined : staleness(request);
    if (stale) {
      log.warn('relay request refused: not fresh', { requestId: request.requestId, why: stale });
      return void reply(request.replyTo, { requestId: request.requestId, failure: { code: 'relay_refused', message: `the relayer sent nothing: ${stale}` } });
    }
    if (earlier) return void (onFailureOnly && !earlier.failure ? undefined : reply(request.replyTo, earlier));
    if (queue.some((q) => q.requestId === request.requestId)) return;
    const sending = inflight.find((t) => t.requestId === request.requestId);
    if (sending) {
      if (!onFailureOnly) void reply(request.replyTo, { requestId: request.requestId, transactionHash: sending.hash, accountNonce: sending.accountNonce });
      return;
    }
    queue.push(request);
  });

  const remember = (result: RelayResult) => {
    answered.delete(result.requestId);
    answered.set(result.requestId, result);
    if (answered.size > REMEMBERED_ANSWERS) answered.delete(answered.keys().next().value!);
  };

  async function broadcastQueued(): Promise<void> {
    // With nothing of ours in flight the chain's count is exact: re-read it, so a counter carried
    // from an older chain (a reset dev chain, another tool using the key) never leaves a gap.
    if (accountNonce === null || inflight.length === 0) accountNonce = await relayer.relayerAccountNonce({ sender });
    const batch = queue.splice(0, BATCH_SIZE);
    let outcome: Awaited<ReturnType<typeof relayer.broadcastBatch>>;
    try {
      outcome = await relayer.broadcastBatch({ startNonce: accountNonce, items: batch, sentAt: Date.now(), sender });
    } catch (err) {
      // Whatever was broadcast before the failure is either mined (and found by the capture's own
      // log read) or refused; the next attempt re-reads the chain's nonce, so no gap is left.
      queue.unshift(...batch);
      accountNonce = null;
      throw err;
    }
    accountNonce = outcome.nextAccountNonce;
    inflight = [...inflight, ...outcome.sent];
    queue.unshift(...batch.filter((item) => outcome.retry.includes(item.requestId)));
    const replies: Promise<void>[] = [];
    for (const tx of outcome.sent) {
      const result = { requestId: tx.requestId, transactionHash: tx.hash, accountNonce: tx.accountNonce };
      remember(result);
      // A requester that follows the chain itself is answered only when something went wrong.
      if (tx.replyOn !== 'failure') replies.push(reply(tx.replyTo, result));
    }
    // Answered before, by a transaction the chain holds (the relayer's own memory of it was lost):
    // the same answer again, and no new transaction.
    for (const known of outcome.known) {
      const item = batch.find((b) => b.requestId === known.requestId);
      if (!item) continue;
      remember(known);
      if (item.replyOn !== 'failure') replies.push(reply(item.replyTo, known));
    }
    for (const refused of outcome.refused) {
      const item = batch.find((b) => b.requestId === refused.requestId)!;
      // A refusal is the request's answer too: asked again, it is given again without a chain read.
      remember(refused);
      replies.push(reply(item.replyTo, refused));
    }
    await Promise.all(replies);
  }

  async function maintainInflight(): Promise<void> {
    const watched = inflight;
    const report = await relayer.inspectInflight({ inflight: watched, now: Date.now(), stuckAfterMs: STUCK_AFTER_MS, sender });
    const gone = new Set([...report.settled, ...report.abandoned.map((a) => a.requestId)]);
    const resent = new Map(report.resent.map((t) => [t.requestId, t]));
    const checked = new Map((report.checked ?? []).map((c) => [c.requestId, c]));
    inflight = inflight
      .filter((t) => !gone.has(t.requestId))
      .map((t) => resent.get(t.requestId) ?? t)
      .map((t) => (checked.has(t.requestId) ? { ...t, checked: true } : t));
    for (const tx of report.resent) {
      const result = { requestId: tx.requestId, transactionHash: tx.hash, accountNonce: tx.accountNonce, replaced: true };
      remember(result);
      if (tx.replyOn !== 'failure') await reply(tx.replyTo, result);
    }
    // Reverted onchain: a requester answered only on failure hears of it here (the others read their receipt).
    for (const { requestId, failure } of checked.values()) {
      const tx = watched.find((t) => t.requestId === requestId);
      if (!failure || !tx) continue;
      const result = { requestId, transactionHash: tx.hash, accountNonce: tx.accountNonce, failure };
      remember(result);
      await reply(tx.replyTo, result);
    }
    for (const abandoned of report.abandoned) {
      const tx = watched.find((t) => t.requestId === abandoned.requestId);
      if (tx) await reply(tx.replyTo, abandoned);
    }
  }

  let lastMaintained = Date.now();
  while (!workflowInfo().continueAsNewSuggested) {
    await condition(() => queue.length > 0, inflight.length ? MAINTENANCE_MS : '1 hour');
    try {
      if (queue.length > 0) await broadcastQueued();
      // In-flight transactions are looked after on their own clock, not after every broadcast: under
      // load that look (three node reads) held up the next batch of captures.
      const due = Date.now() - lastMaintained >= MAINTENANCE_MS;
      if (inflight.length > 0 && due) {
        await maintainInflight();
        lastMaintained = Date.now();
      }
    } catch (err) {
      // An activity that failed for good (node down past its retry budget, a refusal we did not
      // foresee) must not end the relayer: every capture in the merchant's queue depends on it.
      log.error('relayer step failed; retrying after a pause', {
        error: err instanceof ActivityFailure ? String(err.cause?.message ?? err.message) : String(err),
      });
      await sleep(PAUSE_AFTER_FAILURE_MS);
    }
    telemetry.relayerQueue({ queued: queue.length, inflight: inflight.length, ...(network ? { network } : {}) });
  }
  await continueAsNew<typeof merchantRelayerWorkflow>({ accountNonce, inflight, answered: [...answered], queue: [...queue] });
}
