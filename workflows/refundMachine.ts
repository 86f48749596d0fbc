// The life of one refund, as a pure XState machine: the workflow that owns the refund feeds it the
// facts its activities gathered, and the named guards decide. Its context is the refund record and
// its state the record's `stage`, so a record alone is enough to resume it (after a crash, in the
// next run, or in the authorization's own workflow for a partial capture's release).
//
//   prechecking ─PRECHECKED→ submitting ─SUBMITTED→ submitted ─INCLUDED→ preconfirmed ─CONFIRMED→ succeeded
//        ↑                         │                    │  ↖─────REORGED──────┘
//        └──────EXPIRED────────────┼────────────────────┤ (not mined in its window: sign again, same nonce;
//                                  │                    │  after the last attempt, awaitingExpiry)
//                                  └─NOT_SENT→ awaitingExpiry ←─REVERTED─┘
//                                                 └─NONCE_STATE→ failed (unused once the window closed) | submitted (it landed after all)
//   prechecking, refused once an attempt was signed → awaitingExpiry too: that attempt may still land.
//   prechecking, its nonce used by another transfer (refund_sequence_taken) → failed at once: none can.
import { and, assign, setup, transition } from 'xstate';
import type { RefundAttempt } from '../domain/activityContract.js';
import type { ErrorCode, RecordedError } from '../domain/errors.js';
import type { CaptureFailure, OnchainNonceFacts } from '../domain/facts.js';
import type { RefundRecord, RefundStage } from '../domain/refunds.js';
import type { Hex } from 'viem';
import { decimalsOf, formatAmount } from '../domain/amount.js';

/** Attempts not mined within their window before a refund is reported failed (nothing moved). */
export const REFUND_MAX_ATTEMPTS = 3;

export type RefundMachineEvent =
  | { type: 'PRECHECKED'; at: string; attempt: RefundAttempt }
  /** The attempt could not even be prepared, for a reason retrying cannot change (a merchant key this worker lacks). */
  | { type: 'PREPARE_FAILED'; at: string; failure: CaptureFailure }
  | { type: 'SUBMITTED'; at: string; transactionHash: Hex }
  /** The relayer did not send it (or refused): the signed attempt may still be out there. */
  | { type: 'NOT_SENT'; at: string; failure: CaptureFailure }
  | { type: 'INCLUDED'; at: string; transactionHash: Hex; blockNumber: string; blockHash: Hex }
  | { type: 'CONFIRMED'; at: string; transactionHash: Hex; blockNumber: string; blockHash: Hex }
  | { type: 'REORGED'; at: string }
  | { type: 'REVERTED'; at: string; failure: CaptureFailure }
  /** The attempt's validBefore passed by block time with the nonce unused: it can never land. */
  | { type: 'EXPIRED'; at: string }
  /** What became of the nonce once the window of a refused or reverted attempt closed. */
  | { type: 'NONCE_STATE'; at: string; onchain: OnchainNonceFacts };

type EventOf<T extends RefundMachineEvent['type']> = Extract<RefundMachineEvent, { type: T }>;

const recorded = (code: ErrorCode, message: string, at: string): RecordedError => ({ code, message, at });

/**
 * A capture-shaped failure, in a refund's words: the merchant, not the payer, lacks the balance, and
 * a revert the token did not explain is a refund's revert.
 */
export function refundFailureOf(failure: CaptureFailure): CaptureFailure {
  const reason = failure.message.replace(/^the token refused the capture: /, '');
  if (failure.code === 'insufficient_balance') return { code: 'insufficient_merchant_balance', message: `the merchant key cannot cover the refund: ${reason}` };
  if (failure.code === 'capture_reverted') return { code: 'refund_reverted', message: failure.message.replace(/capture/g, 'refund') };
  return { code: failure.code, message: failure.message.replace(/capture/g, 'refund') };
}

/** Why a refund's precheck refused it, in the order the token itself would revert. */
export function refundPrecheckFailure(record: Pick<RefundRecord, 'amountMinor' | 'chain'>, attempt: RefundAttempt): CaptureFailure {
  const { facts } = attempt;
  // Its nonce moved another amount or to another payer: nothing else about this refund matters.
  if (attempt.simulationFailure?.code === 'refund_sequence_taken') return attempt.simulationFailure;
  if (facts.onchain.status === 'canceled') return { code: 'refund_reverted', message: "the refund's nonce was canceled onchain" };
  if (facts.paused) return { code: 'token_policy_blocked', message: 'the token is paused' };
  if (facts.merchantBlacklisted) return { code: 'token_policy_blocked', message: 'the token has blacklisted the merchant' };
  if (facts.payerBlacklisted) return { code: 'token_policy_blocked', message: 'the token has blacklisted the payer' };
  if (BigInt(facts.merchantBalance) < BigInt(record.amountMinor)) {
    return {
      code: 'insufficient_merchant_balance',
      message: `the merchant key holds ${formatAmount(BigInt(facts.merchantBalance), decimalsOf(record.chain))}, the refund needs ${formatAmount(BigInt(record.amountMinor), decimalsOf(record.chain))}`,
    };
  }
  if (BigInt(facts.merchantGasBalance) < BigInt(facts.requiredGas)) {
    return {
      code: 'insufficient_merchant_gas',
      message: `the merchant key has ${facts.merchantGasBalance} wei for gas, a refund needs about ${facts.requiredGas}`,
    };
  }
  if (attempt.simulationFailure) return refundFailureOf(attempt.simulationFailure);
  return { code: 'refund_reverted', message: 'the refund could not be prepared' };
}

const landed = (onchain: OnchainNonceFacts) => onchain.status === 'used';

/** Why a precheck refused the refund, as recorded (a failure, or the lastError of an earlier attempt). */
function precheckRefusal(context: RefundRecord, event: RefundMachineEvent): RecordedError {
  const e = event as EventOf<'PRECHECKED'>;
  const failure = refundPrecheckFailure(context, e.attempt);
  return recorded(failure.code, failure.message, e.at);
}

function prepareRefusal(event: RefundMachineEvent): RecordedError {
  const e = event as EventOf<'PREPARE_FAILED'>;
  return recorded(e.failure.code, e.failure.message, e.at);
}

export const refundMachine = setup({
  types: { context: {} as RefundRecord, events: {} as RefundMachineEvent },
  guards: {
    // The nonce was used by a transfer that is not this refund (its place reused after a reset):
    // none of this refund's attempts can ever land, and that log is not its success.
    refundSequenceTaken: ({ event }) => event.type === 'PRECHECKED' && event.attempt.simulationFailure?.code === 'refund_sequence_taken',
    anEarlierAttemptLanded: ({ event }) => event.type === 'PRECHECKED' && landed(event.attempt.facts.onchain),
    refundNonceIsUnused: ({ event }) => event.type === 'PRECHECKED' && event.attempt.facts.onchain.status === 'unused' && event.attempt.prepared !== null,
    tokenPolicyAllows: ({ event }) =>
      event.type === 'PRECHECKED' && !event.attempt.facts.paused && !event.attempt.facts.merchantBlacklisted && !event.attempt.facts.payerBlacklisted,
    merchantHasEnoughBalance: ({ context, event }) => event.type === 'PRECHECKED' && BigInt(event.attempt.facts.merchantBalance) >= BigInt(context.amountMinor),
    merchantCanPayForGas: ({ event }) =>
      event.type === 'PRECHECKED' && BigInt(event.attempt.facts.merchantGasBalance) >= BigInt(event.attempt.facts.requiredGas),
    simulationSucceeded: ({ event }) => event.type === 'PRECHECKED' && event.attempt.simulationFailure === null,
    attemptsRemain: ({ context }) => context.attempts < REFUND_MAX_ATTEMPTS,
    anEarlierAttemptWasSigned: ({ context }) => context.attempts > 0 && context.validBefore !== null,
    nonceWasUsed: ({ event }) => event.type === 'NONCE_STATE' && landed(event.onchain),
  },
  actions: {
    recordAttempt: assign(({ context, event }) => {
      const e = event as EventOf<'PRECHECKED'>;
      return {
        nonce: e.attempt.nonce,
        fromBlock: context.fromBlock ?? e.attempt.facts.blockNumber ?? null,
        attempts: context.attempts + 1,
        validBefore: e.attempt.prepared?.request.authorization.validBefore ?? null,
        transactionHash: null,
        blockNumber: null,
        blockHash: null,
      };
    }),
    recordLandedAttempt: assign(({ event }) => {
      const e = event as EventOf<'PRECHECKED'> | EventOf<'NONCE_STATE'>;
      const onchain = e.type === 'PRECHECKED' ? e.attempt.facts.onchain : e.onchain;
      return onchain.status === 'unused'
        ? {}
        : { ...(e.type === 'PRECHECKED' ? { nonce: e.attempt.nonce } : {}), transactionHash: onchain.transactionHash, blockNumber: null, blockHash: null };
    }),
    recordPrecheckFailure: assign(({ context, event }) => ({ failure: precheckRefusal(context, event), failedAt: event.at, transactionHash: null })),
    recordPrepareFailure: assign(({ event }) => ({ failure: prepareRefusal(event), failedAt: event.at, transactionHash: null })),
    recordRefusalAfterAttempt: assign({ lastError: ({ context, event }) => precheckRefusal(context, event) }),
    recordPrepareFailureAfterAttempt: assign({ lastError: ({ event }) => prepareRefusal(event) }),
    recordSubmission: assign({ transactionHash: ({ event }) => (event as EventOf<'SUBMITTED'>).transactionHash }),
    recordInclusion: assign(({ event }) => {
      const e = event as EventOf<'INCLUDED'>;
      return { transactionHash: e.transactionHash, blockNumber: e.blockNumber, blockHash: e.blockHash, preconfirmedAt: e.at };
    }),
    forgetInclusion: assign({ blockNumber: null, blockHash: null, preconfirmedAt: null }),
    recordSuccess: assign(({ event }) => {
      const e = event as EventOf<'CONFIRMED'>;
      return { transactionHash: e.transactionHash, blockNumber: e.blockNumber, blockHash: e.blockHash, succeededAt: e.at, lastError: null };
    }),
    recordAttemptFailure: assign({
      lastError: ({ event }) => {
        const e = event as EventOf<'REVERTED'> | EventOf<'NOT_SENT'>;
        const failure = refundFailureOf(e.failure);
        return recorded(failure.code, failure.message, e.at);
      },
    }),
    recordExpiredAttempt: assign({
      lastError: ({ context, event }) =>
        recorded('chain_unavailable', `refund attempt ${context.attempts} was not mined before its validBefore ${context.validBefore}`, event.at),
      transactionHash: null,
    }),
    recordLastAttemptExpired: assign({
      lastError: ({ context, event }) => recorded('chain_unavailable', `the refund was not mined in ${context.attempts} attempts; nothing moved`, event.at),
    }),
    // The window of a refused or reverted attempt closed with its nonce unused: what refused it is why it failed.
    // Its last transaction stays on the record: evidence of the attempt (and of the gas it cost).
    recordDeadAttempt: assign(({ context, event }) => ({
      failure: context.lastError ?? recorded('refund_reverted', 'the refund transaction did not land', event.at),
      failedAt: event.at,
    })),
  },
}).createMachine({
  id: 'refund',
  initial: 'prechecking',
  context: ({ input }) => input as RefundRecord,
  states: {
    prechecking: {
      on: {
        PRECHECKED: [
          // Its nonce paid someone else, or another amount: failed, nothing of it moved, whatever it signed before.
          { guard: 'refundSequenceTaken', target: 'failed', actions: 'recordPrecheckFailure' },
          // A retry after a crash: the last attempt landed. Follow it to the confirmation depth.
          { guard: 'anEarlierAttemptLanded', target: 'submitted', actions: 'recordLandedAttempt' },
          {
            guard: and(['refundNonceIsUnused', 'tokenPolicyAllows', 'merchantHasEnoughBalance', 'merchantCanPayForGas', 'simulationSucceeded']),
            target: 'submitting',
            actions: 'recordAttempt',
          },
          // Refused after an earlier attempt was signed (judged unmined at the head): that attempt can
          // still land until a block at depth is past its window, so the refund fails only then.
          { guard: 'anEarlierAttemptWasSigned', target: 'awaitingExpiry', actions: 'recordRefusalAfterAttempt' },
          // Nothing signed left the worker: the refund failed and moved nothing.
          { target: 'failed', actions: 'recordPrecheckFailure' },
        ],
        PREPARE_FAILED: [
          { guard: 'anEarlierAttemptWasSigned', target: 'awaitingExpiry', actions: 'recordPrepareFailureAfterAttempt' },
          { target: 'failed', actions: 'recordPrepareFailure' },
        ],
      },
    },
    submitting: {
      on: {
        SUBMITTED: { target: 'submitted', actions: 'recordSubmission' },
        NOT_SENT: { target: 'awaitingExpiry', actions: 'recordAttemptFailure' },
        // Followed by one activity, which sees no hash until the attempt lands: one
        // that never landed in its window is signed again, or after the last, awaits its expiry.
        EXPIRED: [
          { guard: 'attemptsRemain', target: 'prechecking', actions: 'recordExpiredAttempt' },
          { target: 'awaitingExpiry', actions: 'recordLastAttemptExpired' },
        ],
      },
    },
    submitted: {
      on: {
        INCLUDED: { target: 'preconfirmed', actions: 'recordInclusion' },
        REVERTED: { target: 'awaitingExpiry', actions: 'recordAttemptFailure' },
        // Not mined in its window: signed again (same nonce) while attempts remain; after the last, the
        // refund fails once a final block says the nonce was never used (a reorg cannot bring it back).
        EXPIRED: [
          { guard: 'attemptsRemain', target: 'prechecking', actions: 'recordExpiredAttempt' },
          { target: 'awaitingExpiry', actions: 'recordLastAttemptExpired' },
        ],
      },
    },
    preconfirmed: {
      on: {
        CONFIRMED: { target: 'succeeded', actions: 'recordSuccess' },
        // A preconfirmed log can still come back `removed: true`: wait for the block again.
        REORGED: { target: 'submitted', actions: 'forgetInclusion' },
      },
    },
    // The attempt's signature may still be out there (a reverted transaction's calldata is public):
    // the refund is failed only once its window has closed with the nonce unused.
    awaitingExpiry: {
      on: {
        NONCE_STATE: [
          { guard: 'nonceWasUsed', target: 'submitted', actions: 'recordLandedAttempt' },
          { target: 'failed', actions: 'recordDeadAttempt' },
        ],
      },
    },
    succeeded: { type: 'final' },
    failed: { type: 'final' },
  },
});

/** The record after an event: the machine decides, the record keeps its state as `stage`. */
export function stepRefund(record: RefundRecord, event: RefundMachineEvent): RefundRecord {
  const snapshot = refundMachine.resolveState({ value: record.stage, context: record });
  const [next] = transition(refundMachine, snapshot, event);
  return { ...next.context, stage: next.value as RefundStage };
}

export function isRefundFinal(record: Pick<RefundRecord, 'stage'>): boolean {
  return record.stage === 'succeeded' || record.stage === 'failed';
}

/** A new refund, before its first precheck. */
export function openRefund(fields: Omit<RefundRecord, keyof typeof blankProgress | 'stage'>): RefundRecord {
  return { ...fields, ...blankProgress, stage: 'prechecking' };
}

const blankProgress = {
  nonce: null,
  fromBlock: null,
  attempts: 0,
  validBefore: null,
  transactionHash: null,
  blockNumber: null,
  blockHash: null,
  failure: null,
  lastError: null,
  preconfirmedAt: null,
  succeededAt: null,
  failedAt: null,
};
