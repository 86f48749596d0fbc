// One workflow per authorization attempt. It reads like the business process: draft (or take a
// pre-signed authorization), wait for the payer's signature, capture when the merchant says so,
// watch the chain for outside consumption, and stop at the deadline. The machine decides each step.
import { allHandlersFinished, condition, log, makeContinueAsNewFunc, setHandler, workflowInfo } from '@temporalio/workflow';
import type { AuthorizationView, AuthorizationWorkflowInput, ResumedAuthorization } from '../domain/authorization.js';
import type { WorkerPolicy } from '../domain/activityContract.js';
import { draftReads } from './activities.js';
import { useChain } from './chainHeader.js';
import { useTokenDecimals } from '../domain/amount.js';
import { Lifecycle, type PersistedLifecycle } from './lifecycle.js';
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
import { claimNonce } from './nonceClaim.js';
import { asCommand, cancel, completePartialCapture, expireAtDeadline, failure, failureOf, reconcile, submitSignature, type ChainWindow } from './procedures.js';
import { createRelayClient } from './relayClient.js';
import { captureInOneActivity } from './captureProcedure.js';
import { screenSignature } from './signatureScreen.js';
import { signatureAttemptKind, type AttemptKind } from './attemptBudget.js';
import { refusedStart, staleStart } from './freshStart.js';

const now = () => new Date().toISOString();

export async function authorizationWorkflow(input: AuthorizationWorkflowInput): Promise<AuthorizationView> {
  // Only the API's fresh start, or this run's own continue-as-new: a start input copied out of an
  // earlier run's history (the id terminated, then started again) would capture or follow again.
  const stale = staleStart('requestedAt' in input ? input : {}, 'resume' in input);
  if (stale) throw refusedStart(stale);
  const presigned = 'presigned' in input ? input.presigned : undefined;
  const draftRequest = 'draft' in input ? input.draft : undefined;
  const resumed = 'resume' in input ? input.resume : undefined;
  const chain = 'chain' in input ? input.chain : (resumed?.lifecycle as PersistedLifecycle | undefined)?.context.chain;
  // Every activity runs on this authorization's network and token; amounts are in its decimals.
  useChain(chain && { network: chain.network, token: chain.token });
  if (chain) useTokenDecimals(chain.decimals);
  const lifecycle = new Lifecycle(
    resumed
      ? (resumed.lifecycle as PersistedLifecycle)
      : {
          orderId: input.orderId,
          payer: presigned ? presigned.authorization.from : draftRequest!.payer,
          value: presigned ? presigned.authorization.value : draftRequest!.value,
          primaryType: presigned ? presigned.primaryType : 'ReceiveWithAuthorization',
          ...(chain ? { chain } : {}),
        },
    now,
  );
  const window: ChainWindow = { fromBlock: resumed?.fromBlock };

  setHandler(statusQuery, () => lifecycle.view());
  const relay = createRelayClient();
  setHandler(draftReadyUpdate, async () => {
    await condition(() => !lifecycle.matches('drafting'));
    if (lifecycle.state === 'rejected') {
      const why = lifecycle.context.lastError;
      throw failure(why?.code ?? 'invalid_signature', why?.message ?? 'the pre-signed authorization was refused');
    }
    // The run id names the resource: with it in the answer, a create needs no describe to learn it.
    return { ...lifecycle.view(), firstRunId: workflowInfo().firstExecutionRunId };
  });
  // Commands grow history while the main loop waits (a contract wallet's failed signatures, say). Each
  // command's end, an activation with jobs of its own (so a replay sees it too), checks the length:
  // the loop then rolls over, whatever the resting state. A check in the wait's own predicate would
  // also fire in the task of a refused update, which a replay never sees.
  let policy: WorkerPolicy | undefined;
  let rollOverDue = false;
  const commandEnded = () => {
    if (policy && shouldRollOver(lifecycle, policy)) rollOverDue = true;
  };
  // A refused command leaves no trace: validators decide what they can without the chain (the state,
  // the signer of a plain ECDSA signature, the attempt budget); only what needs the chain is accepted.
  setHandler(
    submitSignatureUpdate,
    (request) => counted(lifecycle, signatureAttemptKind('signature', request), () => submitSignature(lifecycle, request.signature), commandEnded),
    {
      validator: (request) => {
        lifecycle.assertCan({ type: 'SIGNATURE_SUBMITTED' }, 'accept a signature');
        screenSignature(lifecycle, 'signature', request);
      },
    },
  );
  setHandler(captureUpdate, (request) => counted(lifecycle, 'capture', () => captureInOneActivity(lifecycle, relay, window, request?.amount), commandEnded), {
    validator: (request) => {
      lifecycle.assertCan({ type: 'CAPTURE_REQUESTED' }, 'capture');
      lifecycle.assertWithinBudget('capture');
      assertCaptureAmount(lifecycle.context.value, request?.amount);
    },
  });
  setHandler(
    cancelUpdate,
    (request) => counted(lifecycle, signatureAttemptKind('cancel', request), () => cancel(lifecycle, relay, request.signature), commandEnded),
    {
      validator: (request) => {
        lifecycle.assertCan({ type: 'CANCEL_REQUESTED' }, 'cancel');
        screenSignature(lifecycle, 'cancel', request);
      },
    },
  );

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
  // A signal cannot be refused. One sent from the Temporal UI while a command is in flight waits for
  // it to finish; if the authorization is final by then (or a capture went out), it is logged and dropped.
  setHandler(voidSignal, async (request) => {
    const text = (value: unknown, fallback: string) => (typeof value === 'string' && value.trim() ? value.trim() : fallback);
    const command = { type: 'VOID' as const, reason: text(request?.reason, 'voided from the Temporal UI'), by: text(request?.by, 'operator') };
    await condition(() => lifecycle.isResting);
    if (lifecycle.can(command)) voidAuthorization(command);
    else log.warn('void signal ignored', { state: lifecycle.describeState() });
  });

  // The log watcher's nudge: something happened to our nonce onchain. Check now, not at the next tick.
  let checkRequested = false;
  setHandler(nonceActivitySignal, () => {
    checkRequested = true;
  });

  const overrides = 'policyOverrides' in input ? input.policyOverrides : {};
  // The worker's policy is read with the draft (or the pre-signed check), and kept for the attempt's life.
  policy = resumed?.policy;
  if (presigned) {
    // The create's caller waits for this check, so it gets the draft's short budget.
    const checked = await firstReadOrRefusal(lifecycle, () => draftReads.checkPresignedAuthorization(presigned));
    // The check could not be made (the node did not answer): the attempt ends `rejected`, not failed.
    if (!checked) {
      await condition(allHandlersFinished);
      return lifecycle.view();
    }
    const { domain, check, fromBlock, nonceKey, policy: read } = checked;
    policy ??= { ...read, ...overrides };
    window.fromBlock = fromBlock;
    // One (payer, nonce) pays one order: a payload authcap already holds is refused, never stored twice.
    const claimed = check.valid && (await claimNonce(input.orderId, presigned.authorization, nonceKey));
    const verdict =
      check.valid && !claimed
        ? { valid: false, code: 'nonce_already_held' as const, reason: 'this signed authorization already belongs to another order' }
        : check;
    lifecycle.send({ type: 'PRESIGNED_CHECKED', domain, authorization: presigned.authorization, signature: presigned.signature, check: verdict });
    if (lifecycle.state === 'stored') lifecycle.indexNonce(nonceKey);
  } else if (draftRequest) {
    const draft = await firstReadOrRefusal(lifecycle, () => draftReads.draftAuthorization({ ...draftRequest, primaryType: lifecycle.context.primaryType }));
    // The draft could not be made (the node did not answer): the attempt ends `rejected`, not failed.
    if (!draft) {
      await condition(allHandlersFinished);
      return lifecycle.view();
    }
    policy ??= { ...draft.policy, ...overrides };
    window.fromBlock = draft.fromBlock;
    if (lifecycle.can({ type: 'DRAFTED', ...draft })) {
      lifecycle.send({ type: 'DRAFTED', domain: draft.domain, authorization: draft.authorization });
      lifecycle.indexNonce(draft.nonceKey);
      // The payer will sign this exact nonce: it must not be posted again as a pre-signed authorization
      // for another order. A draft's nonce carries a keyed tag the pre-signed check refuses
      // (activities/draftNonce.ts), so it needs no claim of its own.
    }
  }
  if (!policy) throw failure('internal_error', 'the workflow input is neither a draft, a pre-signed authorization nor a resumed one');

  // Until the deadline (a durable timer at validBefore, not polling), wait for the watcher's nudge:
  // the payer may cancel elsewhere, or someone may settle a TransferWithAuthorization. A periodic
  // re-read of its own happens only when the worker asks for one (reconcileIntervalSeconds > 0).
  const validBefore = lifecycle.context.authorization ? Number(lifecycle.context.authorization.validBefore) * 1000 : Date.now();
  while (!lifecycle.isFinal) {
    // The chain settled a partial capture that no command is following (its own gave up, or a
    // deadline or watcher check found the nonce used): the rest goes back to the payer first.
    if (lifecycle.matches({ capturing: 'releasing' })) {
      await completePartialCapture(lifecycle, relay);
      continue;
    }
    const untilDeadline = validBefore - Date.now();
    if (untilDeadline <= 0) {
      await untilSettled(() => expireAtDeadline(lifecycle, () => condition(() => lifecycle.isResting), window));
      if (lifecycle.isFinal) break;
      continue;
    }
    const period = policy.reconcileIntervalSeconds > 0 ? policy.reconcileIntervalSeconds * 1000 : untilDeadline;
    // Commands grow history while the loop waits (a payer's failed signatures, say): roll over as soon
    // as it is long, whatever the state, so no authorization's replay grows without bound.
    const settled = await condition(() => lifecycle.isFinal || checkRequested || rollOverDue, Math.min(untilDeadline, period));
    if (rollOverDue && !lifecycle.isFinal) await rollOver(input.orderId, lifecycle, policy, window, resumed);
    checkRequested = false;
    if (!lifecycle.isFinal && lifecycle.isResting && Date.now() < validBefore) await untilSettled(() => reconcile(lifecycle, window), 1);
    else if (settled && !lifecycle.isFinal) await condition(() => lifecycle.isResting || lifecycle.isFinal || lifecycle.matches({ capturing: 'releasing' }));
    if (shouldRollOver(lifecycle, policy)) await rollOver(input.orderId, lifecycle, policy, window, resumed);
  }

  // The last command's answer is sent before this run ends.
  await condition(allHandlersFinished);
  return lifecycle.view();
}

/**
 * The attempt's first read of the chain (the draft, or the pre-signed authorization's check). One the
 * node could not answer ends the attempt `rejected` with the reason (undefined here): a node outage
 * ends no workflow failed, and leaves no record `drafting` for ever.
 */
async function firstReadOrRefusal<T>(lifecycle: Lifecycle, read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    const why = failureOf(err);
    log.warn('the first read failed; the attempt ends rejected', { orderId: lifecycle.context.orderId, code: why.code, error: why.message });
    lifecycle.send({ type: 'COMMAND_FAILED', failure: why });
    return undefined;
  }
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

/** A chain read in the main loop may fail for a while (node outage): the workflow must outlive it. */
async function untilSettled(step: () => Promise<void>, attempts = Infinity): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await step();
    } catch (err) {
      log.warn('chain read failed; the workflow carries on', { error: failureOf(err).message });
      if (attempt >= attempts) return;
      await condition(() => false, '10 seconds');
    }
  }
}

function shouldRollOver(lifecycle: Lifecycle, policy: WorkerPolicy): boolean {
  if (lifecycle.isFinal || !lifecycle.isResting) return false;
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength > policy.historyLimit;
}

/** Continue-as-new with the machine's persisted state: history stays short however long it waits. */
async function rollOver(orderId: string, lifecycle: Lifecycle, policy: WorkerPolicy, window: ChainWindow, resumed?: ResumedAuthorization): Promise<never> {
  await condition(() => allHandlersFinished() && lifecycle.isResting);
  const next: AuthorizationWorkflowInput = {
    orderId,
    resume: { lifecycle: lifecycle.persisted(), policy, fromBlock: window.fromBlock, runs: (resumed?.runs ?? 0) + 1 },
  };
  // The events live in the memo: the next run starts with all of them (and the view).
  return makeContinueAsNewFunc<(input: AuthorizationWorkflowInput) => Promise<AuthorizationView>>({ memo: workflowInfo().memo })(next);
}
