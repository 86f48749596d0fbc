// The states of an authorization that holds its funds (docs/holds.md): once the payer's signature is
// checked the escrow's authorize goes out (`holding`), then the merchant captures in parts and voids
// the rest (`held`), each part's transaction at depth before it counts. The machine's other states
// are in workflows/machine.ts; the guards and actions both use are in workflows/machineSetup.ts.
import { and } from 'xstate';
import { authorizationSetup } from './machineSetup.js';

const goodPrecheck = and(['nonceIsUnused', 'tokenPolicyAllows', 'isWithinValidityWindow', 'payerHasEnoughBalance', 'merchantCanPayForGas']);

/** From the signature checked to the funds in escrow: only the chain ends it, or a precheck that sent nothing. */
export const holding = authorizationSetup.createStateConfig({
  tags: ['busy'],
  initial: 'prechecking',
  states: {
    prechecking: {
      on: {
        PRECHECKED: [
          { guard: goodPrecheck, target: 'submitting' },
          // Used already: our authorize landed before (a retried step); the chain's event confirms it.
          { guard: 'nonceWasUsedOnchain', target: 'submitted' },
          // Nothing was sent: the hold is declined, with why (the payer may sign a new authorization).
          { target: '#authorization.rejected', actions: 'recordPrecheckFailure' },
        ],
        COMMAND_FAILED: { target: '#authorization.rejected', actions: 'recordCommandFailure' },
      },
    },
    submitting: { on: { HOLD_SUBMITTED: { target: 'submitted', actions: 'recordHoldSubmission' } } },
    submitted: {},
  },
  on: {
    HOLD_CONFIRMED: { target: '#authorization.held', actions: 'recordHeld' },
    // Reverted or refused: the payer's authorization is unused and nothing is held.
    HOLD_FAILED: { target: '#authorization.rejected', actions: 'recordHoldFailure' },
    NONCE_CONSUMED_ONCHAIN: { guard: 'nonceWasCanceledOnchain', target: '#authorization.canceled', actions: 'recordOnchainCancellation' },
    DEADLINE_REACHED: [
      { guard: 'nonceWasCanceledOnchain', target: '#authorization.canceled', actions: 'recordOnchainCancellation' },
      // Unused at the payer's deadline: the escrow can never take it now.
      { guard: 'nonceIsUnusedOnchain', target: '#authorization.expired', actions: 'recordExpiry' },
    ],
  },
});

/** Funds in escrow: captures in parts, a void of the rest, the end of the capture window. */
export const held = authorizationSetup.createStateConfig({
  initial: 'open',
  states: {
    open: {
      on: {
        // The rest goes back to the payer once no part is under way (a void meanwhile is refused: void after it).
        VOID: { guard: 'noCaptureUnderWay', target: 'voiding', actions: 'recordVoid' },
      },
    },
    voiding: {
      tags: ['busy'],
      on: { COMMAND_FAILED: { target: 'open', actions: ['forgetVoid', 'recordCommandFailure'] } },
    },
  },
  on: {
    PART_REQUESTED: { guard: 'partIsKnown', actions: 'recordPart' },
    PART_SUBMITTED: { guard: 'partIsKnown', actions: 'recordPart' },
    PART_SUCCEEDED: [
      { guard: 'holdIsSpentAfterIt', target: '#authorization.captured', actions: 'recordPart' },
      { guard: 'partIsKnown', actions: 'recordPart' },
    ],
    PART_FAILED: { guard: 'partIsKnown', actions: 'recordPartFailure' },
    HOLD_RELEASED: [
      { guard: 'somethingWasCaptured', target: '#authorization.captured', actions: 'recordPart' },
      { guard: 'releasedByVoid', target: '#authorization.voided', actions: 'recordPart' },
      // authcap's void at the end of the capture window, or the payer's reclaim after it.
      { target: '#authorization.expired', actions: ['recordPart', 'recordExpiry'] },
    ],
  },
});
