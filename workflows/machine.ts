// The lifecycle of one authorization (design.md), as a pure XState machine. The workflow keeps the
// snapshot and feeds it events that carry facts (workflows/machineContext.ts); the named guards
// below make every decision.
import { and, assign, setup } from 'xstate';
import { decimalsOf, formatAmount } from '../domain/amount.js';
import type { OnchainConsumption } from '../domain/facts.js';
import {
  isPartial,
  keptAmount,
  onchainCapture,
  onchainFacts,
  recorded,
  type AuthorizationContext,
  type AuthorizationEvent,
  type EventOf,
  type MachineInput,
} from './machineContext.js';
import { precheckFailure } from './precheckFailure.js';

export { keptAmount, type AuthorizationContext, type AuthorizationEvent, type MachineInput } from './machineContext.js';

// Whatever state we are in, a nonce consumed onchain decides the outcome: the log names which.
const onchainOutcome = [
  { guard: 'nonceWasUsedOnchain', target: '#authorization.captured', actions: 'recordOnchainCapture' },
  { guard: 'nonceWasCanceledOnchain', target: '#authorization.canceled', actions: 'recordOnchainCancellation' },
] as const;
const partialCaptureSettledOnchain = {
  guard: and(['nonceWasUsedOnchain', 'captureIsPartial']),
  target: '#authorization.capturing.releasing',
  actions: 'recordPartialOnchainCapture',
} as const;
const onchainOutcomeOr = (fallback: 'expired') => [...onchainOutcome, { target: `#authorization.${fallback}`, actions: 'recordExpiry' }] as const;

export const authorizationMachine = setup({
  types: {
    context: {} as AuthorizationContext,
    events: {} as AuthorizationEvent,
    input: {} as MachineInput,
  },
  guards: {
    signatureIsFromPayer: ({ event }) => (event.type === 'SIGNATURE_CHECKED' || event.type === 'PRESIGNED_CHECKED') && event.check.valid,
    cancelSignatureIsFromPayer: ({ event }) => event.type === 'CANCEL_SIGNATURE_CHECKED' && event.check.valid,
    nonceIsUnused: ({ event }) => event.type === 'PRECHECKED' && !event.facts.authorizationUsed,
    tokenPolicyAllows: ({ event }) => event.type === 'PRECHECKED' && !event.facts.paused && !event.facts.payerBlacklisted && !event.facts.merchantBlacklisted,
    isWithinValidityWindow: ({ context, event }) =>
      event.type === 'PRECHECKED' &&
      context.authorization !== null &&
      BigInt(context.authorization.validAfter) < BigInt(event.facts.chainTime) &&
      BigInt(event.facts.chainTime) < BigInt(context.authorization.validBefore),
    payerHasEnoughBalance: ({ context, event }) => event.type === 'PRECHECKED' && BigInt(event.facts.payerBalance) >= BigInt(context.value),
    merchantCanPayForGas: ({ event }) => event.type === 'PRECHECKED' && BigInt(event.facts.merchantGasBalance) >= BigInt(event.facts.requiredGas),
    deadlineHasPassed: ({ context, event }) =>
      event.type === 'PRECHECKED' && context.authorization !== null && BigInt(event.facts.chainTime) >= BigInt(context.authorization.validBefore),
    captureFailedBecauseExpired: ({ event }) => event.type === 'CAPTURE_FAILED' && event.failure.code === 'authorization_expired',
    nonceWasUsedOnchain: ({ event }) => onchainFacts(event)?.status === 'used',
    captureIsPartial: ({ context }) => isPartial(context),
    releaseSucceeded: ({ event }) => event.type === 'RELEASE_UPDATED' && event.release.stage === 'succeeded',
    nonceWasCanceledOnchain: ({ event }) => onchainFacts(event)?.status === 'canceled',
  },
  actions: {
    recordDraft: assign(({ event }) => {
      const e = event as EventOf<'DRAFTED'> | EventOf<'PRESIGNED_CHECKED'>;
      return { domain: e.domain, authorization: e.authorization };
    }),
    recordSignature: assign({
      signature: ({ event }) => (event as EventOf<'SIGNATURE_CHECKED'> | EventOf<'PRESIGNED_CHECKED'>).signature,
    }),
    recordRejection: assign({
      lastError: ({ event }) => {
        const e = event as EventOf<'PRESIGNED_CHECKED'>;
        return recorded(e.check.code ?? 'invalid_signature', e.check.reason ?? 'the pre-signed authorization was refused', e.at);
      },
    }),
    recordCaptureAmount: assign({
      captureAmount: ({ event }) => (event as EventOf<'CAPTURE_REQUESTED'>).amount ?? null,
    }),
    recordRelease: assign(({ context, event }) => {
      const release = (event as EventOf<'RELEASE_UPDATED'>).release;
      // While the release retries (the token paused, say), its last trouble is the authorization's.
      const trouble = release.failure ?? release.lastError;
      return { release, lastError: release.stage === 'succeeded' ? null : (trouble ?? context.lastError) };
    }),
    recordPrecheckFailure: assign({
      lastError: ({ context, event }) => {
        const e = event as EventOf<'PRECHECKED'>;
        const failure = precheckFailure(context, e.facts);
        return recorded(failure.code, failure.message, e.at);
      },
    }),
    recordSubmission: assign({
      lastError: null,
      capture: ({ context, event }) => {
        const e = event as EventOf<'CAPTURE_SUBMITTED'>;
        return {
          transactionHash: e.transactionHash,
          blockNumber: null,
          blockHash: null,
          submittedAt: e.at,
          preconfirmedAt: null,
          confirmedAt: null,
          by: 'authcap' as const,
          amount: formatAmount(BigInt(keptAmount(context)), decimalsOf(context.chain)),
        };
      },
    }),
    recordPreconfirmation: assign({
      capture: ({ context, event }) => {
        const e = event as EventOf<'CAPTURE_PRECONFIRMED'>;
        return context.capture && { ...context.capture, blockNumber: e.blockNumber, blockHash: e.blockHash, preconfirmedAt: e.at };
      },
    }),
    forgetPreconfirmation: assign({
      capture: ({ context }) => context.capture && { ...context.capture, blockNumber: null, blockHash: null, preconfirmedAt: null },
    }),
    recordConfirmation: assign({
      capture: ({ context, event }) => {
        const e = event as EventOf<'CAPTURE_CONFIRMED'>;
        return {
          transactionHash: e.transactionHash,
          blockNumber: e.blockNumber,
          blockHash: e.blockHash,
          submittedAt: context.capture?.submittedAt ?? null,
          preconfirmedAt: context.capture?.preconfirmedAt ?? e.at,
          confirmedAt: e.at,
          by: 'authcap' as const,
          amount: formatAmount(BigInt(keptAmount(context)), decimalsOf(context.chain)),
        };
      },
    }),
    // A failed attempt leaves no capture or cancellation on the record: only the reason why.
    recordCaptureFailure: assign({
      capture: null,
      lastError: ({ context, event }) => {
        const e = event as EventOf<'CAPTURE_FAILED'> | EventOf<'COMMAND_FAILED'>;
        const tx = context.capture?.transactionHash;
        return recorded(e.failure.code, tx ? `${e.failure.message} (transaction ${tx})` : e.failure.message, e.at);
      },
    }),
    recordCancelFailure: assign({
      cancellation: null,
      lastError: ({ context, event }) => {
        const e = event as EventOf<'CANCEL_FAILED'> | EventOf<'COMMAND_FAILED'>;
        const tx = context.cancellation?.transactionHash;
        return recorded(e.failure.code, tx ? `${e.failure.message} (transaction ${tx})` : e.failure.message, e.at);
      },
    }),
    recordCancelSubmission: assign({
      lastError: null,
      cancellation: ({ event }) => {
        const e = event as EventOf<'CANCEL_SUBMITTED'>;
        return { transactionHash: e.transactionHash, blockNumber: null, at: e.at, by: 'authcap' as const };
      },
    }),
    recordCancellation: assign({
      cancellation: ({ event }) => {
        const e = event as EventOf<'CANCEL_CONFIRMED'>;
        return { transactionHash: e.transactionHash, blockNumber: e.blockNumber, at: e.at, by: 'authcap' as const };
      },
    }),
    recordVoid: assign({
      void: ({ event }) => {
        const e = event as EventOf<'VOID'>;
        return { reason: e.reason, by: e.by, at: e.at };
      },
    }),
    // Consumed outside a capture of ours in flight (from stored, drafted): the merchant got all of it.
    recordOnchainCapture: assign({ capture: ({ context, event }) => onchainCapture(context, event, context.value) }),
    // A partial capture's nonce was used (by our transaction, a replacement of it, or after its command
    // gave up): the merchant keeps what it asked for and the rest goes back.
    recordPartialOnchainCapture: assign({ capture: ({ context, event }) => onchainCapture(context, event, keptAmount(context)) }),
    recordOnchainCancellation: assign({
      cancellation: ({ context, event }) => {
        const facts = onchainFacts(event) as OnchainConsumption;
        const ours = context.cancellation?.transactionHash === facts.transactionHash;
        return { transactionHash: facts.transactionHash, blockNumber: facts.blockNumber, at: event.at, by: ours ? ('authcap' as const) : ('onchain' as const) };
      },
    }),
    recordCommandFailure: assign({
      lastError: ({ event }) => {
        const e = event as EventOf<'COMMAND_FAILED'>;
        return recorded(e.failure.code, e.failure.message, e.at);
      },
    }),
    recordExpiry: assign({
      lastError: ({ event }) => recorded('authorization_expired', 'the validity window closed before a capture', event.at),
    }),
  },
}).createMachine({
  id: 'authorization',
  initial: 'drafting',
  context: ({ input }) => ({
    orderId: input.orderId,
    payer: input.payer,
    value: input.value,
    primaryType: input.primaryType,
    ...(input.chain ? { chain: input.chain } : {}),
    domain: null,
    authorization: null,
    signature: null,
    capture: null,
    cancellation: null,
    void: null,
    lastError: null,
    captureAmount: null,
    release: null,
  }),
  states: {
    drafting: {
      on: {
        DRAFTED: { target: 'drafted', actions: 'recordDraft' },
        // A pre-signed authorization skips `drafted`: it is stored once verified, or refused outright.
        PRESIGNED_CHECKED: [
          { guard: 'signatureIsFromPayer', target: 'stored', actions: ['recordDraft', 'recordSignature'] },
          { target: 'rejected', actions: 'recordRejection' },
        ],
        // The draft could not be made (the node did not answer in the draft's budget): nothing was
        // drafted or signed, so the attempt ends `rejected` with why, and the order may try again.
        COMMAND_FAILED: { target: 'rejected', actions: 'recordCommandFailure' },
        VOID: { target: 'voided', actions: 'recordVoid' },
      },
    },
    drafted: {
      initial: 'awaitingSignature',
      states: {
        awaitingSignature: {
          on: {
            SIGNATURE_SUBMITTED: 'verifyingSignature',
            // Void only between commands: a command in flight finishes first, then the void decides.
            VOID: { target: '#authorization.voided', actions: 'recordVoid' },
          },
        },
        verifyingSignature: {
          tags: ['busy'],
          on: {
            COMMAND_FAILED: { target: 'awaitingSignature', actions: 'recordCommandFailure' },
            SIGNATURE_CHECKED: [
              { guard: 'signatureIsFromPayer', target: '#authorization.stored', actions: 'recordSignature' },
              // A bad signature changes nothing: back to waiting, the draft untouched.
              { target: 'awaitingSignature' },
            ],
          },
        },
      },
      on: {
        // The payer may hold a signature we never saw stored: the chain still has the last word.
        DEADLINE_REACHED: onchainOutcomeOr('expired'),
        NONCE_CONSUMED_ONCHAIN: onchainOutcome,
      },
    },
    stored: {
      initial: 'idle',
      states: {
        idle: {
          on: {
            CAPTURE_REQUESTED: { target: 'prechecking', actions: 'recordCaptureAmount' },
            CANCEL_REQUESTED: 'verifyingCancellation',
            VOID: { target: '#authorization.voided', actions: 'recordVoid' },
          },
        },
        prechecking: {
          tags: ['busy'],
          on: {
            COMMAND_FAILED: { target: 'idle', actions: 'recordCommandFailure' },
            PRECHECKED: [
              // Past the deadline with the nonce unused nothing can ever settle; a consumed nonce is
              // reconciled from its log instead (it may have been captured or canceled in time).
              { guard: and(['deadlineHasPassed', 'nonceIsUnused']), target: '#authorization.expired', actions: 'recordExpiry' },
              {
                guard: and(['nonceIsUnused', 'tokenPolicyAllows', 'isWithinValidityWindow', 'payerHasEnoughBalance', 'merchantCanPayForGas']),
                target: '#authorization.capturing',
              },
              // A failed precheck sends nothing: stay stored, say why, allow another try until the deadline.
              { target: 'idle', actions: 'recordPrecheckFailure' },
            ],
          },
        },
        verifyingCancellation: {
          tags: ['busy'],
          on: {
            COMMAND_FAILED: { target: 'idle', actions: 'recordCommandFailure' },
            CANCEL_SIGNATURE_CHECKED: [{ guard: 'cancelSignatureIsFromPayer', target: '#authorization.canceling' }, { target: 'idle' }],
          },
        },
      },
      on: {
        // A partial capture asked for stands: should the nonce turn out used (our capture landed after
        // its command gave up, or someone settled a pre-signed payload), the rest still goes back.
        DEADLINE_REACHED: [partialCaptureSettledOnchain, ...onchainOutcomeOr('expired')],
        NONCE_CONSUMED_ONCHAIN: [partialCaptureSettledOnchain, ...onchainOutcome],
      },
    },
    capturing: {
      tags: ['busy'],
      initial: 'submitting',
      states: {
        submitting: {
          on: {
            CAPTURE_SUBMITTED: { target: 'submitted', actions: 'recordSubmission' },
            // Nothing is known to be on the wire yet; if the relayer sends it after all, the
            // AuthorizationUsed log settles the authorization as captured (reconciliation).
            COMMAND_FAILED: { target: '#authorization.stored', actions: 'recordCaptureFailure' },
          },
        },
        submitted: { on: { CAPTURE_PRECONFIRMED: { target: 'preconfirmed', actions: 'recordPreconfirmation' } } },
        // A preconfirmed log can still come back `removed: true`: wait for the block again.
        preconfirmed: { on: { CAPTURE_REORGED: { target: 'submitted', actions: 'forgetPreconfirmation' } } },
        // A partial capture is at depth: the difference goes back to the payer before it is `captured`.
        // The money has moved, so nothing leaves this state but the release's success: it retries
        // until then (durably: a crash resumes it), and no capture event applies any more.
        releasing: {
          on: {
            RELEASE_UPDATED: [{ guard: 'releaseSucceeded', target: '#authorization.captured', actions: 'recordRelease' }, { actions: 'recordRelease' }],
            CAPTURE_CONFIRMED: {},
            CAPTURE_FAILED: {},
            NONCE_CONSUMED_ONCHAIN: {},
          },
        },
      },
      on: {
        CAPTURE_CONFIRMED: [
          { guard: 'captureIsPartial', target: '.releasing', actions: 'recordConfirmation' },
          { target: 'captured', actions: 'recordConfirmation' },
        ],
        CAPTURE_FAILED: [
          { guard: 'captureFailedBecauseExpired', target: 'expired', actions: 'recordCaptureFailure' },
          { target: 'stored', actions: 'recordCaptureFailure' },
        ],
        NONCE_CONSUMED_ONCHAIN: [
          { guard: and(['nonceWasUsedOnchain', 'captureIsPartial']), target: '.releasing', actions: 'recordPartialOnchainCapture' },
          ...onchainOutcome,
        ],
      },
    },
    canceling: {
      tags: ['busy'],
      on: {
        CANCEL_SUBMITTED: { actions: 'recordCancelSubmission' },
        // A cancellation in flight can only consume the nonce, never move money: resting at stored is
        // safe, and the chain (reconciliation) has the last word.
        COMMAND_FAILED: { target: 'stored', actions: 'recordCancelFailure' },
        CANCEL_CONFIRMED: { target: 'canceled', actions: 'recordCancellation' },
        CANCEL_FAILED: { target: 'stored', actions: 'recordCancelFailure' },
        NONCE_CONSUMED_ONCHAIN: onchainOutcome,
      },
    },
    captured: { type: 'final' },
    canceled: { type: 'final' },
    voided: { type: 'final' },
    expired: { type: 'final' },
    rejected: { type: 'final' },
  },
});
