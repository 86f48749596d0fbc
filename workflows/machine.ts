// The lifecycle of one authorization (design.md), as a pure XState machine. The workflow keeps the
// snapshot and feeds it events that carry facts (workflows/machineContext.ts); the named guards and
// actions (workflows/machineSetup.ts) make every decision.
import { and } from 'xstate';
import { authorizationSetup } from './machineSetup.js';
import { held, holding } from './holdStates.js';

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

export const authorizationMachine = authorizationSetup.createMachine({
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
          { guard: and(['signatureIsFromPayer', 'holdsFunds']), target: 'holding', actions: ['recordDraft', 'recordSignature'] },
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
              // A hold's signature goes straight to the escrow: the funds are held at once.
              { guard: and(['signatureIsFromPayer', 'holdsFunds']), target: '#authorization.holding', actions: 'recordSignature' },
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
    holding,
    held,
    captured: { type: 'final' },
    canceled: { type: 'final' },
    voided: { type: 'final' },
    expired: { type: 'final' },
    rejected: { type: 'final' },
  },
});
