// The ledger of one captured authorization's refunds, inside its refunds workflow: what was captured,
// each refund's record, what is left to refund, and whether refunds are still taken. It decides a new
// refund before it enters history (the update's validator) and publishes every change where it is
// read: the memo (the totals, each refund under its own key, the events), the search attributes
// operators filter by, and the Temporal UI's current details.
import type { Hex } from 'viem';
import { ApplicationFailure, setCurrentDetails, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { decimalsOf, formatAmount } from '../domain/amount.js';
import { eventId, type AuthcapEvent, type RefundEventType } from '../domain/events.js';
import {
  LEDGER_MEMO_KEY,
  MAX_REFUNDS_PER_AUTHORIZATION,
  ledgerTotals,
  refundMemoKey,
  refundStateOf,
  type RefundLedgerSummary,
  type RefundRecord,
} from '../domain/refunds.js';
import { AmountRefundedMinorAttribute, RefundStatesAttribute } from '../domain/searchAttributes.js';
import { failure } from './failures.js';
import { MemoEventLog } from './memoEventLog.js';
import { isRefundFinal, openRefund } from './refundMachine.js';
import { REFUND_ALREADY_REQUESTED, type RefundCommand, type RefundsWorkflowInput } from './refundMessages.js';

type Carried = NonNullable<RefundsWorkflowInput['carried']>;

const now = () => new Date().toISOString();

export class RefundLedger {
  readonly refunds: RefundRecord[];
  readonly refundableUntil: string;
  /** Set while the ledger closes: new refunds are refused. */
  closing = false;
  private readonly captured: bigint;
  private eventSequence: number;
  /** The ledger's events live in its own memo, each under its own key. */
  private readonly eventLog: MemoEventLog;
  private indexed = { refunded: -1n, states: '' };
  private readonly amount: (minor: bigint) => string;

  constructor(private readonly input: RefundsWorkflowInput) {
    this.refunds = [...(input.carried?.refunds ?? [])];
    this.refundableUntil = input.carried?.refundableUntil ?? input.refundableUntil;
    this.captured = BigInt(input.amountCapturedMinor);
    this.eventSequence = input.carried?.eventSequence ?? 0;
    this.eventLog = new MemoEventLog(input.carried?.eventLog);
    this.amount = (minor) => formatAmount(minor, decimalsOf(input.chain));
  }

  /** What can still be promised: captured, less what is refunded or being refunded. */
  remaining(): bigint {
    const { refunded, pending } = ledgerTotals(this.refunds);
    return this.captured - refunded - pending;
  }

  get allFinal(): boolean {
    return this.refunds.every(isRefundFinal);
  }

  summary(): RefundLedgerSummary {
    return {
      authorizationRunId: this.input.authorizationRunId,
      orderId: this.input.orderId,
      amountCapturedMinor: this.input.amountCapturedMinor,
      amountRefundedMinor: ledgerTotals(this.refunds).refunded.toString(),
      open: !this.closing,
      refundableUntil: this.refundableUntil,
    };
  }

  /** Everything that can be decided without the chain is decided here: a refused refund leaves no trace. */
  validate(command: RefundCommand): void {
    if (typeof command?.requestKey !== 'string' || !command.requestKey) throw failure('validation_error', 'a refund needs a request key');
    const earlier = this.refunds.find((r) => r.requestKey === command.requestKey);
    if (earlier) {
      if (earlier.requestFingerprint !== command.requestFingerprint)
        throw failure('idempotency_key_reused', 'this Idempotency-Key was used for a different refund');
      // The same request again (a retry after a timeout): refused, so it leaves no trace however
      // often it comes, with the refund it asked for in the refusal's details.
      throw ApplicationFailure.create({ type: REFUND_ALREADY_REQUESTED, nonRetryable: true, message: 'this refund was requested already', details: [earlier] });
    }
    const until = this.refundableUntil;
    if (Date.now() >= Date.parse(until)) throw failure('invalid_state', `refunds for this authorization closed at ${until}`);
    if (this.closing) {
      const nothingLeft = this.remaining() === 0n;
      throw failure(
        nothingLeft ? 'refund_exceeds_captured' : 'invalid_state',
        nothingLeft ? 'everything captured has been refunded' : `refunds for this authorization closed at ${until}`,
      );
    }
    if (this.refunds.length >= MAX_REFUNDS_PER_AUTHORIZATION) {
      throw failure('refund_limit_reached', `this authorization has ${this.refunds.length} refunds, the most authcap keeps for one`);
    }
    if (command.amountMinor !== null && (typeof command.amountMinor !== 'string' || !/^[1-9]\d{0,77}$/.test(command.amountMinor))) {
      throw failure('validation_error', 'the refund amount must be a positive whole number of minor units');
    }
    if (command.reason !== null && (typeof command.reason !== 'string' || command.reason.length > 500)) {
      throw failure('validation_error', 'the refund reason must be text of at most 500 characters');
    }
    const left = this.remaining();
    const amount = command.amountMinor === null ? left : BigInt(command.amountMinor);
    if (left === 0n || amount > left) {
      const { refunded, pending } = ledgerTotals(this.refunds);
      const what = `captured ${this.amount(this.captured)}, refunded ${this.amount(refunded)}${pending > 0n ? `, ${this.amount(pending)} being refunded` : ''}`;
      throw failure(
        'refund_exceeds_captured',
        left === 0n
          ? `nothing is left to refund (${what})`
          : `a refund of ${this.amount(amount)} is more than is left to refund, ${this.amount(left)} (${what})`,
      );
    }
  }

  /** A refund the validator accepted, recorded (pending) and announced: reserved before anything else runs. */
  open(command: RefundCommand): RefundRecord {
    const { input } = this;
    const record = openRefund({
      sequence: this.refunds.length + 1,
      ...(input.chain ? { chain: input.chain } : {}),
      authorizationRunId: input.authorizationRunId,
      orderId: input.orderId,
      payer: input.payer,
      merchant: input.merchant,
      captureTransactionHash: input.captureTransactionHash ?? null,
      amountMinor: (command.amountMinor === null ? this.remaining() : BigInt(command.amountMinor)).toString(),
      reason: command.reason,
      createdAt: now(),
      requestKey: command.requestKey,
      requestFingerprint: command.requestFingerprint,
    });
    this.refunds.push(record);
    this.publish(record);
    this.announce('refund.created', record);
    return record;
  }

  /** A refund's new record, as its procedure made it: kept, published, and announced when it ends. */
  update(record: RefundRecord): void {
    this.refunds[this.refunds.findIndex((r) => r.sequence === record.sequence)] = record;
    this.publish(record);
    if (record.stage === 'succeeded') this.announce('refund.succeeded', record);
    if (record.stage === 'failed') this.announce('refund.failed', record);
  }

  /** The transactions of the refunds that succeeded (a held payment's: their escrow events are counted). */
  refundTransactions(): Hex[] {
    return this.refunds.flatMap((r) => (r.stage === 'succeeded' && r.transactionHash ? [r.transactionHash] : []));
  }

  /** The refund as the ledger holds it now (a refund set aside may have moved since). */
  current(record: RefundRecord): RefundRecord {
    return this.refunds.find((r) => r.sequence === record.sequence) ?? record;
  }

  /** The totals under `ledger`, and these refunds each under its own key. */
  memo(records: readonly RefundRecord[] = this.refunds): Record<string, unknown> {
    return { [LEDGER_MEMO_KEY]: this.summary(), ...Object.fromEntries(records.map((r) => [refundMemoKey(r.sequence), r])) };
  }

  /** What the next run starts from (continue-as-new). */
  carried(): Carried {
    return { refunds: this.refunds, eventSequence: this.eventSequence, refundableUntil: this.refundableUntil, eventLog: this.eventLog.state() };
  }

  /** The totals, and the refunds that changed (each under its own key: the rest of the memo stays as it is). */
  publish(...records: RefundRecord[]): void {
    upsertMemo(this.memo(records));
    // Operators find refunded authorizations by these; they change only when a refund settles.
    const refunded = ledgerTotals(this.refunds).refunded;
    const states = [...new Set(this.refunds.map((r) => refundStateOf(r.stage)))].sort();
    if (refunded !== this.indexed.refunded || states.join() !== this.indexed.states) {
      upsertSearchAttributes([
        { key: AmountRefundedMinorAttribute, value: Number(refunded) },
        { key: RefundStatesAttribute, value: states },
      ]);
      this.indexed = { refunded, states: states.join() };
    }
    // What each refund is doing, for the Temporal UI's "current details".
    const open = this.refunds.filter((r) => !isRefundFinal(r));
    setCurrentDetails(
      open.length === 0
        ? `${this.amount(refunded)} of ${this.amount(this.captured)} refunded; nothing in flight`
        : open.map((r) => `refund ${r.sequence}: ${this.amount(BigInt(r.amountMinor))} to ${r.payer}, ${r.stage} (attempt ${r.attempts})`).join('\n'),
    );
  }

  /** An event about a refund, in the memo with the search attributes the feed and the dispatchers find it by. */
  private announce(type: RefundEventType, record: RefundRecord): void {
    this.eventSequence += 1;
    const authorization = { ...this.input.authorization, amountRefunded: this.amount(ledgerTotals(this.refunds).refunded) };
    const event = {
      id: eventId(workflowInfo().firstExecutionRunId, this.eventSequence),
      type,
      createdAt: now(),
      orderId: this.input.orderId,
      // publicEvent turns the record into the refund callers see (ids are built outside the sandbox).
      data: { object: record, authorization },
    } as unknown as AuthcapEvent;
    const recorded = this.eventLog.record([event], now());
    upsertMemo(recorded.memo);
    upsertSearchAttributes(recorded.searchAttributes);
  }
}
