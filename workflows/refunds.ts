// One refunds workflow per captured authorization that gives money back (`refunds-<authorization's
// first run id>`), started by its first refund. It is the authorization's ledger: Temporal runs it
// single-threaded, so refunds asked for at the same moment are decided one after the other and
// their sum can never pass what was captured. Each refund then runs to its end (refundProcedure.ts)
// while others are decided; the memo keeps the ledger for the API and the Temporal UI.
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  getExternalWorkflowHandle,
  log,
  patched,
  proxySinks,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { formatAmount, useTokenDecimals } from '../domain/amount.js';
import { useChain } from './chainHeader.js';
import { eventId, eventStreamWorkflowId, type AuthcapEvent, type RefundEventType } from '../domain/events.js';
import {
  LEDGER_MEMO_KEY,
  MAX_REFUNDS_PER_AUTHORIZATION,
  ledgerTotals,
  refundMemoKey,
  refundStateOf,
  refundsWorkflowId,
  type RefundLedgerSummary,
  type RefundLedgerView,
  type RefundRecord,
} from '../domain/refunds.js';
import { AmountRefundedMinorAttribute, RefundStatesAttribute } from '../domain/searchAttributes.js';
import type { AuthcapSinks } from '../domain/telemetry.js';
import { startOutboxPublisher } from './eventPublisher.js';
import { eventsEndSignal } from './eventStream.js';
import { failure } from './failures.js';
import { isRefundFinal, openRefund } from './refundMachine.js';
import { REFUND_ALREADY_REQUESTED, refundUpdate, type RefundCommand, type RefundsWorkflowInput } from './refundMessages.js';
import { expiryDueAt, runRefund } from './refundProcedure.js';
import { MemoEventLog } from './memoEventLog.js';
import { BOUND_PAYLOADS_PATCH } from './sealedInputs.js';
import { refusedStart, staleStart } from './freshStart.js';
import { useGeneration } from './activities.js';
import { coalesceWrites } from './coalescedWrites.js';
import { createRelayClient } from './relayClient.js';

const { telemetry } = proxySinks<AuthcapSinks>();

const HISTORY_LIMIT = 2_000;

/** Patch id: before it, a refund waiting for a refused attempt's window to close held the next ones back. */
const SET_ASIDE_WHILE_EXPIRING = 'refunds-set-aside-while-expiring';
const now = () => new Date().toISOString();

export async function refundsWorkflow(input: RefundsWorkflowInput): Promise<RefundLedgerView> {
  // The ledger of one authorization runs under that authorization's id and no other: an input that
  // names another authorization (a start under a squatted id) is refused before anything runs.
  if (workflowInfo().workflowId !== refundsWorkflowId(input.authorizationRunId) && patched(BOUND_PAYLOADS_PATCH)) {
    throw refusedStart(`it is the ledger of ${refundsWorkflowId(input.authorizationRunId)}, not of ${workflowInfo().workflowId}`);
  }
  // And it starts only as the API started it: fresh, or carried over by its own continue-as-new. A
  // start input copied out of history (the id terminated, then started again) would rewind the ledger.
  const stale = staleStart(input, input.carried !== undefined);
  if (stale && patched(BOUND_PAYLOADS_PATCH)) throw refusedStart(stale);
  const refunds: RefundRecord[] = [...(input.carried?.refunds ?? [])];
  const captured = BigInt(input.amountCapturedMinor);
  let eventSequence = input.carried?.eventSequence ?? 0;
  const refundableUntil = input.carried?.refundableUntil ?? input.refundableUntil;
  let closing = false;
  const outbox: AuthcapEvent[] = [];
  // Generation 2: the ledger's events live in its own memo (no stream) and its writes are coalesced.
  const generation = input.generation ?? 1;
  useGeneration(generation);
  // Refunds go out on the authorization's network, in its token; amounts in its decimals.
  useChain(input.chain && { network: input.chain.network, token: input.chain.token });
  if (input.chain) useTokenDecimals(input.chain.decimals);
  const eventLog = generation >= 2 ? new MemoEventLog(input.carried?.eventLog) : undefined;
  if (generation >= 2) coalesceWrites();
  const events = eventLog ? { isDrained: () => true } : startOutboxPublisher(outbox, input.orderId);
  // Refunds accepted and not yet carried out, oldest first.
  const queue: RefundRecord[] = [];
  // Money leaves only on decisions already in history: the relay request is a regular activity.
  const relay = createRelayClient({ committed: true });

  const remaining = () => {
    const { refunded, pending } = ledgerTotals(refunds);
    return captured - refunded - pending;
  };
  const summary = (): RefundLedgerSummary => ({
    authorizationRunId: input.authorizationRunId,
    orderId: input.orderId,
    amountCapturedMinor: input.amountCapturedMinor,
    amountRefundedMinor: ledgerTotals(refunds).refunded.toString(),
    open: !closing,
    refundableUntil,
  });
  /** The totals under `ledger`, and these refunds each under its own key. */
  const ledgerMemo = (records: readonly RefundRecord[]) => ({
    [LEDGER_MEMO_KEY]: summary(),
    ...Object.fromEntries(records.map((r) => [refundMemoKey(r.sequence), r])),
  });
  let indexed = { refunded: -1n, states: '' };
  /** The totals, and the refunds that changed (each under its own key: the rest of the memo stays as it is). */
  const publish = (...records: RefundRecord[]) => {
    upsertMemo(ledgerMemo(records));
    // Operators find refunded authorizations by these; they change only when a refund settles.
    const refunded = ledgerTotals(refunds).refunded;
    const states = [...new Set(refunds.map((r) => refundStateOf(r.stage)))].sort();
    if (refunded !== indexed.refunded || states.join() !== indexed.states) {
      upsertSearchAttributes([
        { key: AmountRefundedMinorAttribute, value: Number(refunded) },
        { key: RefundStatesAttribute, value: states },
      ]);
      indexed = { refunded, states: states.join() };
    }
    // What each refund is doing, for the Temporal UI's "current details".
    const open = refunds.filter((r) => !isRefundFinal(r));
    setCurrentDetails(
      open.length === 0
        ? `${formatAmount(ledgerTotals(refunds).refunded)} of ${formatAmount(captured)} refunded; nothing in flight`
        : open.map((r) => `refund ${r.sequence}: ${formatAmount(BigInt(r.amountMinor))} to ${r.payer}, ${r.stage} (attempt ${r.attempts})`).join('\n'),
    );
  };
  const announce = (type: RefundEventType, record: RefundRecord) => {
    eventSequence += 1;
    const authorization = { ...input.authorization, amountRefunded: formatAmount(ledgerTotals(refunds).refunded) };
    const event = {
      id: eventId(workflowInfo().firstExecutionRunId, eventSequence),
      type,
      createdAt: now(),
      orderId: input.orderId,
      // publicEvent turns the record into the refund callers see (ids are built outside the sandbox).
      data: { object: record, authorization },
    } as unknown as AuthcapEvent;
    if (!eventLog) return void outbox.push(event);
    const recorded = eventLog.record([event], now());
    upsertMemo(recorded.memo);
    upsertSearchAttributes(recorded.searchAttributes);
  };
  const replace = (record: RefundRecord) => {
    refunds[refunds.findIndex((r) => r.sequence === record.sequence)] = record;
  };

  // Refunds whose refused or reverted attempt waits for its window to close: the next refunds do not
  // wait behind them. Each is carried on once its window has closed (expiryDueAt).
  const settingAside: RefundRecord[] = [];
  /** When each refund set aside was first carried out (its settle time is measured from there). */
  const startedAt = new Map<number, number>();
  const dueAside = () => settingAside.find((r) => Date.now() >= expiryDueAt(r));
  const nextDue = () => Math.min(...settingAside.map(expiryDueAt)) - Date.now();

  /** Carries an accepted refund to its end (succeeded, or failed with nothing moved), or sets it aside while an attempt's window closes. */
  async function carryOut(record: RefundRecord, started = Date.now()): Promise<void> {
    const final = await runRefund(record, {
      relay,
      onChange: (next) => {
        replace(next);
        publish(next);
        if (next.stage === 'succeeded') announce('refund.succeeded', next);
        if (next.stage === 'failed') announce('refund.failed', next);
      },
      setAsideWhileExpiring: () => patched(SET_ASIDE_WHILE_EXPIRING),
    });
    if (!isRefundFinal(final)) {
      settingAside.push(final);
      startedAt.set(final.sequence, started);
      return;
    }
    telemetry.refundSettled({
      orderId: input.orderId,
      network: input.chain?.network,
      outcome: final.stage === 'succeeded' ? 'succeeded' : 'failed',
      ms: Date.now() - started,
      code: final.failure?.code,
    });
  }

  // The update answers as soon as the refund is recorded (pending), not when it ends: Temporal admits
  // only a few updates in flight per workflow, and a burst of refunds must each get its answer. The
  // caller follows the refund in the memo; the main loop below carries the refunds out, in order.
  setHandler(
    refundUpdate,
    (command) => {
      // Reserved before anything else runs: the next refund's validator already counts this one.
      const record = openRefund({
        sequence: refunds.length + 1,
        ...(input.chain ? { chain: input.chain } : {}),
        authorizationRunId: input.authorizationRunId,
        orderId: input.orderId,
        payer: input.payer,
        merchant: input.merchant,
        captureTransactionHash: input.captureTransactionHash ?? null,
        amountMinor: (command.amountMinor === null ? remaining() : BigInt(command.amountMinor)).toString(),
        reason: command.reason,
        createdAt: now(),
        requestKey: command.requestKey,
        requestFingerprint: command.requestFingerprint,
      });
      refunds.push(record);
      publish(record);
      announce('refund.created', record);
      queue.push(record);
      return record;
    },
    { validator: (command) => validateRefund(command) },
  );

  /** Everything that can be decided without the chain is decided here: a refused refund leaves no trace. */
  function validateRefund(command: RefundCommand): void {
    if (typeof command?.requestKey !== 'string' || !command.requestKey) throw failure('validation_error', 'a refund needs a request key');
    const earlier = refunds.find((r) => r.requestKey === command.requestKey);
    if (earlier) {
      if (earlier.requestFingerprint !== command.requestFingerprint)
        throw failure('idempotency_key_reused', 'this Idempotency-Key was used for a different refund');
      // The same request again (a retry after a timeout): refused, so it leaves no trace however
      // often it comes, with the refund it asked for in the refusal's details.
      throw ApplicationFailure.create({ type: REFUND_ALREADY_REQUESTED, nonRetryable: true, message: 'this refund was requested already', details: [earlier] });
    }
    if (Date.now() >= Date.parse(refundableUntil)) throw failure('invalid_state', `refunds for this authorization closed at ${refundableUntil}`);
    if (closing) {
      throw failure(
        remaining() === 0n ? 'refund_exceeds_captured' : 'invalid_state',
        remaining() === 0n ? 'everything captured has been refunded' : `refunds for this authorization closed at ${refundableUntil}`,
      );
    }
    if (refunds.length >= MAX_REFUNDS_PER_AUTHORIZATION) {
      throw failure('refund_limit_reached', `this authorization has ${refunds.length} refunds, the most authcap keeps for one`);
    }
    if (command.amountMinor !== null && (typeof command.amountMinor !== 'string' || !/^[1-9]\d{0,77}$/.test(command.amountMinor))) {
      throw failure('validation_error', 'the refund amount must be a positive whole number of minor units');
    }
    if (command.reason !== null && (typeof command.reason !== 'string' || command.reason.length > 500)) {
      throw failure('validation_error', 'the refund reason must be text of at most 500 characters');
    }
    const left = remaining();
    const amount = command.amountMinor === null ? left : BigInt(command.amountMinor);
    if (left === 0n || amount > left) {
      const { refunded, pending } = ledgerTotals(refunds);
      const what = `captured ${formatAmount(captured)}, refunded ${formatAmount(refunded)}${pending > 0n ? `, ${formatAmount(pending)} being refunded` : ''}`;
      throw failure(
        'refund_exceeds_captured',
        left === 0n
          ? `nothing is left to refund (${what})`
          : `a refund of ${formatAmount(amount)} is more than is left to refund, ${formatAmount(left)} (${what})`,
      );
    }
  }

  publish(...refunds);

  // One timer, to the end of the refund window.
  let windowEnded = Date.now() >= Date.parse(refundableUntil);
  if (!windowEnded) void sleep(Date.parse(refundableUntil) - Date.now()).then(() => (windowEnded = true));
  const idle = () => queue.length === 0 && allHandlersFinished() && refunds.every(isRefundFinal) && events.isDrained();
  const closable = () => idle() && (remaining() === 0n || windowEnded);
  // Whether history is long is asked after each refund carried out, never in a wait's predicate: that
  // also runs in the task of a refused update, which a replay never sees (as in the authorization).
  let rollOverDue = false;
  const historyIsLong = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_LIMIT;
  const rollOver = () => rollOverDue && idle();
  // The business process: carry out each accepted refund, one at a time (each is decided when it is
  // accepted; carrying them out one after the other keeps this workflow's steps in one order, so a
  // replay meets them in the order they happened); close when nothing is left to refund or the window
  // has ended; roll over when history grows.
  for (;;) {
    const woken = () => queue.length > 0 || closable() || rollOver() || dueAside() !== undefined;
    if (settingAside.length > 0) await condition(woken, Math.max(nextDue(), 1));
    else await condition(woken);
    const due = dueAside();
    if (due) {
      settingAside.splice(settingAside.indexOf(due), 1);
      await carryOut(refunds.find((r) => r.sequence === due.sequence) ?? due, startedAt.get(due.sequence));
      rollOverDue = historyIsLong();
      continue;
    }
    const next = queue.shift();
    if (next) {
      await carryOut(next);
      rollOverDue = historyIsLong();
      continue;
    }
    if (closable()) {
      // Refused from now on; whatever was accepted before this line runs to its end first.
      closing = true;
      publish();
      await condition(() => queue.length > 0 || idle());
      if (queue.length > 0) {
        closing = false;
        continue;
      }
      break;
    }
    // The next run starts with this run's memo: between the two, readers (GET a refund, the totals)
    // would otherwise find a ledger with nothing in it.
    // (Generation 2: its events, kept in the memo, go along.)
    const memo = eventLog ? { ...workflowInfo().memo, ...ledgerMemo(refunds) } : ledgerMemo(refunds);
    return makeContinueAsNewFunc<typeof refundsWorkflow>({ memo })({
      ...input,
      carried: { refunds, eventSequence, refundableUntil, ...(eventLog ? { eventLog: eventLog.state() } : {}) },
    });
  }
  // The refund events' stream has no final event type of its own: tell it no more will come.
  if (eventSequence > 0 && !eventLog) {
    await getExternalWorkflowHandle(eventStreamWorkflowId(workflowInfo().firstExecutionRunId))
      .signal(eventsEndSignal)
      .catch((err: Error) => log.warn('could not end the refunds event stream', { error: err.message }));
  }
  return { ...summary(), refunds };
}
