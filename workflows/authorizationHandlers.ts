// How an authorization workflow takes its commands: the merchant's and the payer's updates, the
// operator's void signal, the log watcher's nudge and the read query. A refused command leaves no
// trace: each update's validator decides what it can without the chain (the state, the signer of a
// plain ECDSA signature, the attempt budget); only what needs the chain is accepted into history.
import { condition, log, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WorkerPolicy } from '../domain/activityContract.js';
import { signatureAttemptKind, type AttemptKind } from './attemptBudget.js';
import { cancel } from './cancelProcedure.js';
import { capture } from './captureProcedure.js';
import { capturePart, validatePart } from './holdParts.js';
import { failure, failureOf } from './failures.js';
import type { Lifecycle } from './lifecycle.js';
import {
  cancelUpdate,
  captureUpdate,
  draftReadyUpdate,
  nonceActivitySignal,
  statusQuery,
  submitSignatureUpdate,
  voidSignal,
  voidUpdate,
  type VoidRequest,
} from './messages.js';
import { asCommand, submitSignature, type ChainWindow } from './procedures.js';
import type { Relay } from './relayClient.js';
import { shouldRollOver } from './rollOver.js';
import { screenSignature } from './signatureScreen.js';

/** What the handlers tell the workflow's main loop. */
export interface Inbox {
  /** The log watcher saw this authorization's nonce onchain: the loop reads the chain now, not at its next tick. */
  checkRequested: boolean;
  /** A command ended with history long: the loop rolls over once the authorization rests. */
  rollOverDue: boolean;
  /** Set once the attempt is open: from then on each command's end checks history's length against it. */
  policy?: WorkerPolicy;
}

export function acceptCommands(lifecycle: Lifecycle, relay: Relay, window: ChainWindow): Inbox {
  const inbox: Inbox = { checkRequested: false, rollOverDue: false };
  // Commands grow history while the main loop waits (a contract wallet's failed signatures, say). Each
  // command's end, an activation with jobs of its own (so a replay sees it too), checks the length:
  // the loop then rolls over, whatever the resting state. A check in the wait's own predicate would
  // also fire in the task of a refused update, which a replay never sees.
  const ended = () => {
    if (inbox.policy && shouldRollOver(lifecycle, inbox.policy)) inbox.rollOverDue = true;
  };
  const run = <T>(kind: AttemptKind, command: () => Promise<T>) => counted(lifecycle, kind, command, ended);

  setHandler(statusQuery, () => lifecycle.view());
  setHandler(draftReadyUpdate, async () => {
    await condition(() => !lifecycle.matches('drafting'));
    if (lifecycle.state === 'rejected') {
      const why = lifecycle.context.lastError;
      throw failure(why?.code ?? 'invalid_signature', why?.message ?? 'the pre-signed authorization was refused');
    }
    // The run id names the resource: with it in the answer, a create needs no describe to learn it.
    return { ...lifecycle.view(), firstRunId: workflowInfo().firstExecutionRunId };
  });
  setHandler(submitSignatureUpdate, (request) => run(signatureAttemptKind('signature', request), () => submitSignature(lifecycle, request.signature)), {
    validator: (request) => {
      lifecycle.assertCan({ type: 'SIGNATURE_SUBMITTED' }, 'accept a signature');
      screenSignature(lifecycle, 'signature', request);
    },
  });
  setHandler(
    captureUpdate,
    // A held payment's part ends like any command: its end checks whether history grew long.
    (request) =>
      lifecycle.context.hold ? capturePart(lifecycle, request).finally(ended) : run('capture', () => capture(lifecycle, relay, window, request?.amount)),
    {
      validator: (request) => {
        // A held payment's capture is a part: the hold's ledger decides it (workflows/holdParts.ts).
        if (lifecycle.context.hold) return validatePart(lifecycle, request);
        lifecycle.assertCan({ type: 'CAPTURE_REQUESTED' }, 'capture');
        lifecycle.assertWithinBudget('capture');
        assertCaptureAmount(lifecycle.context.value, request?.amount);
      },
    },
  );
  setHandler(cancelUpdate, (request) => run(signatureAttemptKind('cancel', request), () => cancel(lifecycle, relay, request.signature)), {
    validator: (request) => {
      lifecycle.assertCan({ type: 'CANCEL_REQUESTED' }, 'cancel');
      screenSignature(lifecycle, 'cancel', request);
    },
  });
  acceptVoids(lifecycle);
  // The log watcher's nudge: something happened to our nonce onchain.
  setHandler(nonceActivitySignal, () => {
    inbox.checkRequested = true;
  });
  return inbox;
}

/** Void offchain, by the merchant (the update) or an operator in the Temporal UI (the signal). */
function acceptVoids(lifecycle: Lifecycle): void {
  const voidAuthorization = ({ reason, by }: VoidRequest) => {
    lifecycle.send({ type: 'VOID', reason: reason.trim(), by: by?.trim() || 'merchant' });
    return lifecycle.view();
  };
  setHandler(voidUpdate, voidAuthorization, {
    validator: (request) => {
      if (typeof request?.reason !== 'string' || !request.reason.trim()) throw failure('validation_error', 'void needs a reason');
      if (request.by !== undefined && typeof request.by !== 'string') throw failure('validation_error', 'void by must be a string');
      lifecycle.assertCan({ type: 'VOID', reason: request.reason, by: request.by }, 'void');
    },
  });
  // A signal cannot be refused. One sent while a command is in flight waits for it to finish; if the
  // authorization is final by then (or a capture went out), it is logged and dropped.
  setHandler(voidSignal, async (request) => {
    const text = (value: unknown, fallback: string) => (typeof value === 'string' && value.trim() ? value.trim() : fallback);
    const command = { type: 'VOID' as const, reason: text(request?.reason, 'voided from the Temporal UI'), by: text(request?.by, 'operator') };
    await condition(() => lifecycle.isResting);
    if (lifecycle.can(command)) voidAuthorization(command);
    else log.warn('void signal ignored', { state: lifecycle.describeState() });
  });
}

/** A partial capture keeps at least one minor unit and at most what the payer authorized. */
function assertCaptureAmount(value: string, amount: unknown): void {
  if (amount === undefined) return;
  if (typeof amount !== 'string' || !/^[1-9]\d{0,77}$/.test(amount))
    throw failure('validation_error', 'the capture amount must be a positive whole number of minor units');
  if (BigInt(amount) > BigInt(value)) throw failure('capture_exceeds_authorized', 'the capture amount is larger than the payer authorized');
}

/**
 * Runs a command; a failure that leaves the authorization open counts against its attempt budget,
 * unless the chain could not be asked at all (a node outage is nobody's failed attempt).
 */
async function counted<T>(lifecycle: Lifecycle, kind: AttemptKind, command: () => Promise<T>, ended: () => void): Promise<T> {
  try {
    return await asCommand(lifecycle, command);
  } catch (err) {
    if (failureOf(err).code !== 'chain_unavailable') lifecycle.recordFailedAttempt(kind);
    throw err;
  } finally {
    ended();
  }
}
