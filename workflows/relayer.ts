// One relayer per merchant key. Every capture and cancellation transaction goes through it, and
// Temporal runs one workflow execution at a time, so account nonces are handed out in order with
// no lock and no collision, however many captures and worker processes there are.
import {
  condition, continueAsNew, getExternalWorkflowHandle, log, proxyActivities, setHandler, workflowInfo,
} from '@temporalio/workflow';
import type { InflightTransaction, RelayRequest, RelayResult, RelayerActivities } from '../domain/relay.js';
import { relayRequestSignal, relayResultSignal } from './messages.js';

const relayer = proxyActivities<RelayerActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds' },
});

export interface RelayerState {
  accountNonce: number | null;
  inflight: InflightTransaction[];
  /** Recent answers, so a repeated request gets the same transaction back. */
  answered: [string, RelayResult][];
}

const BATCH_SIZE = 25;
const STUCK_AFTER_MS = 30_000;
const MAINTENANCE_MS = 5_000;
const REMEMBERED_ANSWERS = 2_000;

export async function merchantRelayerWorkflow(state: RelayerState = { accountNonce: null, inflight: [], answered: [] }): Promise<void> {
  let accountNonce = state.accountNonce;
  let inflight = state.inflight;
  const answered = new Map(state.answered);
  const queue: RelayRequest[] = [];

  const reply = async (to: RelayRequest['replyTo'], result: RelayResult) => {
    try {
      await getExternalWorkflowHandle(to.workflowId, to.runId).signal(relayResultSignal, result);
    } catch (err) {
      // The requester finished meanwhile; its own reconciliation reads the outcome from the chain.
      log.warn('relay result not delivered', { requestId: result.requestId, error: String(err) });
    }
  };

  setHandler(relayRequestSignal, (request) => {
    const earlier = answered.get(request.requestId);
    if (earlier) return void reply(request.replyTo, earlier);
    if (queue.some((q) => q.requestId === request.requestId)) return;
    const sending = inflight.find((t) => t.requestId === request.requestId);
    if (sending) return void reply(request.replyTo, { requestId: request.requestId, transactionHash: sending.hash, accountNonce: sending.accountNonce });
    queue.push(request);
  });

  const remember = (result: RelayResult) => {
    answered.delete(result.requestId);
    answered.set(result.requestId, result);
    if (answered.size > REMEMBERED_ANSWERS) answered.delete(answered.keys().next().value!);
  };

  while (!workflowInfo().continueAsNewSuggested) {
    await condition(() => queue.length > 0, inflight.length ? MAINTENANCE_MS : '1 hour');
    if (queue.length > 0) {
      // With nothing of ours in flight the chain's count is exact: re-read it, so a counter carried
      // from an older chain (a reset dev chain, another tool using the key) never leaves a gap.
      if (accountNonce === null || inflight.length === 0) accountNonce = await relayer.relayerAccountNonce();
      const batch = queue.splice(0, BATCH_SIZE);
      const outcome = await relayer.broadcastBatch({ startNonce: accountNonce, items: batch, sentAt: Date.now() });
      accountNonce = outcome.nextAccountNonce;
      inflight = [...inflight, ...outcome.sent];
      queue.unshift(...batch.filter((item) => outcome.retry.includes(item.requestId)));
      const replies: Promise<void>[] = [];
      for (const tx of outcome.sent) {
        const result = { requestId: tx.requestId, transactionHash: tx.hash, accountNonce: tx.accountNonce };
        remember(result);
        replies.push(reply(tx.replyTo, result));
      }
      for (const refused of outcome.refused) {
        const item = batch.find((b) => b.requestId === refused.requestId)!;
        replies.push(reply(item.replyTo, refused));
      }
      await Promise.all(replies);
    }
    if (inflight.length > 0) {
      const watched = inflight;
      const report = await relayer.inspectInflight({ inflight: watched, now: Date.now(), stuckAfterMs: STUCK_AFTER_MS });
      const gone = new Set([...report.settled, ...report.abandoned.map((a) => a.requestId)]);
      const resent = new Map(report.resent.map((t) => [t.requestId, t]));
      inflight = inflight.filter((t) => !gone.has(t.requestId)).map((t) => resent.get(t.requestId) ?? t);
      for (const tx of report.resent) {
        const result = { requestId: tx.requestId, transactionHash: tx.hash, accountNonce: tx.accountNonce, replaced: true };
        remember(result);
        await reply(tx.replyTo, result);
      }
      for (const abandoned of report.abandoned) {
        const tx = watched.find((t) => t.requestId === abandoned.requestId);
        if (tx) await reply(tx.replyTo, abandoned);
      }
    }
  }
  // Signals that arrived while we decided to roll over are handled by the next run.
  await condition(() => queue.length === 0);
  await continueAsNew<typeof merchantRelayerWorkflow>({ accountNonce, inflight, answered: [...answered] });
}
