// The authorization machine's named guards and actions (XState `setup`): every decision the lifecycle
// makes reads as one of these conditions, and every change to its context is one of these actions.
// The states that use them are in workflows/machine.ts (a plain authorization) and
// workflows/holdStates.ts (one that holds its funds in escrow).
import { assign, setup } from 'xstate';
import { decimalsOf, formatAmount } from '../domain/amount.js';
import type { OnchainConsumption } from '../domain/facts.js';
import {
  isPartial,
  newHold,
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
import { holdConfirmed, holdSubmitted, noCaptureUnderWay, partChanged, partIsKnown, somethingCaptured, spentAfter } from './holdContext.js';

/** Who authcap's own void at the end of a hold's capture window is by: what was left goes back, and the hold expired. */
export const AUTHCAP_DEADLINE_VOID = 'authcap';

export const authorizationSetup = setup({
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
    // Holds (workflows/holdStates.ts).
    // A drafted hold carries its terms in the context; a pre-signed one brings them with its check.
    holdsFunds: ({ context, event }) => context.hold !== undefined || (event.type === 'PRESIGNED_CHECKED' && event.hold !== undefined),
    nonceIsUnusedOnchain: ({ event }) => onchainFacts(event)?.status === 'unused',
    holdIsSpentAfterIt: ({ context, event }) => spentAfter(context, event),
    partIsKnown: ({ context, event }) => partIsKnown(context, event),
    somethingWasCaptured: ({ context, event }) => somethingCaptured(context) || (event.type === 'PART_SUCCEEDED' && context.hold !== undefined),
    releasedByVoid: ({ context, event }) => event.type === 'HOLD_RELEASED' && event.kind === 'void' && context.void?.by !== AUTHCAP_DEADLINE_VOID,
    noCaptureUnderWay: ({ context }) => noCaptureUnderWay(context),
  },
  actions: {
    recordDraft: assign(({ event }) => {
      const e = event as EventOf<'DRAFTED'> | EventOf<'PRESIGNED_CHECKED'>;
      return { domain: e.domain, authorization: e.authorization, ...(e.hold ? { hold: newHold(e.hold) } : {}) };
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
    recordHoldSubmission: assign({ lastError: null, hold: ({ context, event }) => holdSubmitted(context, event as EventOf<'HOLD_SUBMITTED'>) }),
    recordHeld: assign({ hold: ({ context, event }) => holdConfirmed(context, event as EventOf<'HOLD_CONFIRMED'>) }),
    recordHoldFailure: assign({
      lastError: ({ event }) => {
        const e = event as EventOf<'HOLD_FAILED'>;
        return recorded(e.failure.code, e.failure.message, e.at);
      },
    }),
    recordPart: assign({ hold: ({ context, event }) => partChanged(context, event) }),
    // A part's failure is the authorization's last trouble too (a capture asked for moved nothing).
    recordPartFailure: assign({
      hold: ({ context, event }) => partChanged(context, event),
      lastError: ({ event }) => {
        const e = event as EventOf<'PART_FAILED'>;
        return recorded(e.failure.code, e.failure.message, e.at);
      },
    }),
    forgetVoid: assign({ void: null }),
    recordExpiry: assign({
      lastError: ({ event }) => recorded('authorization_expired', 'the validity window closed before a capture', event.at),
    }),
  },
});
