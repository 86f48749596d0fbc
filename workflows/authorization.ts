// One workflow per authorization attempt. It reads like the business process: draft (or take a
// pre-signed authorization), wait for the payer's signature, capture when the merchant says so,
// watch the chain for outside consumption, and stop at the deadline. The machine decides each step.
import { allHandlersFinished, condition, continueAsNew, log, makeContinueAsNewFunc, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import type { AuthorizationView, AuthorizationWorkflowInput, ResumedAuthorization } from '../domain/authorization.js';
import type { WorkerPolicy } from '../domain/activityContract.js';
import { currentGeneration, draftReads, shortReads, useGeneration } from './activities.js';
import { useChain } from './chainHeader.js';
import { useTokenDecimals } from '../domain/amount.js';
import { coalesceWrites } from './coalescedWrites.js';
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
import {
  asCommand,
  cancel,
  capture,
  completePartialCapture,
  expireAtDeadline,
  failure,
  failureOf,
  reconcile,
  submitSignature,
  type ChainWindow,
} from './procedures.js';
import { createRelayClient } from './relayClient.js';
import { captureInOneActivity } from './captureProcedure.js';
import { startEventPublisher, type EventPublisher } from './eventPublisher.js';
import { screenSignature } from './signatureScreen.js';
import { signatureAttemptKind, type AttemptKind } from './attemptBudget.js';
import { refusedStart, staleStart } from './freshStart.js';

const now = () => new Date().toISOString();

/**
 * Patch id: before it, the API's starts carried no time of request. Asked only when a start lacks
 * one: histories recorded before replay as they ran, a new run refuses it (a copied start input).
 */
export const FRESH_START_PATCH = 'authorization-starts-are-fresh';

export async function authorizationWorkflow(input: AuthorizationWorkflowInput): Promise<AuthorizationView> {
  // Only the API's fresh start, or this run's own continue-as-new: a start input copied out of an
  // earlier run's history (the id terminated, then started again) would capture or follow again.
  const stale = staleStart('requestedAt' in input ? input : {}, 'resume' in input);
  if (stale && ('requestedAt' in input || patched(FRESH_START_PATCH))) throw refusedStart(stale);
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
  // Generation 2 (AUTHORIZATION_GENERATION): events in the memo, writes coalesced, no claim per draft,
  // no patch markers; runs started before replay the code they ran.
  const generation = resumed ? (resumed.generation ?? 1) : 'generation' in input ? (input.generation ?? 1) : 1;
  useGeneration(generation);
  if (generation >= 2) {
    coalesceWrites();
    lifecycle.keepEventsInMemo();
  }
  // Every transition that matters to an order service becomes an event: in the memo, or handed to its stream in order.
  const events: EventPublisher = generation >= 2 ? { isDrained: () => true } : startEventPublisher(lifecycle);

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
  let rollsOverWhileWaiting = false;
  let rollOverDue = false;
  const commandEnded = () => {
    if (rollsOverWhileWaiting && policy && shouldRollOver(lifecycle, policy)) rollOverDue = true;
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
  // Generation 2 captures in one activity (workflows/captureProcedure.ts); runs started before, as they ran.
  const captureNow = generation >= 2 ? captureInOneActivity : capture;
  setHandler(captureUpdate, (request) => counted(lifecycle, 'capture', () => captureNow(lifecycle, relay, window, request?.amount), commandEnded), {
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
  // Generation 2 reads the worker's policy with the draft (or the pre-signed check): one local activity fewer.
  policy = resumed?.policy ?? (generation >= 2 ? undefined : { ...(await shortReads().workerPolicy()), ...overrides });
  if (presigned) {
    const checked = await firstReadOrRefusal(lifecycle, generation, () =>
      // Generation 3: the create's caller waits for this check, so it gets the draft's short budget.
      (generation >= 3 ? draftReads : shortReads()).checkPresignedAuthorization(presigned),
    );
    // The check could not be made (the node did not answer): the attempt ends `rejected`, not failed.
    if (!checked) {
      await condition(() => allHandlersFinished() && events.isDrained());
      return lifecycle.view();
    }
    const { domain, check, fromBlock, nonceKey, policy: read } = checked;
    policy ??= { ...read!, ...overrides };
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
    const draft = await draftOrRefusal(lifecycle, generation, { ...draftRequest, primaryType: lifecycle.context.primaryType });
    // The draft could not be made (the node did not answer): the attempt ends `rejected`, not failed.
    if (!draft) {
      await condition(() => allHandlersFinished() && events.isDrained());
      return lifecycle.view();
    }
    policy ??= { ...draft.policy!, ...overrides };
    window.fromBlock = draft.fromBlock;
    if (lifecycle.can({ type: 'DRAFTED', ...draft })) {
      lifecycle.send({ type: 'DRAFTED', domain: draft.domain, authorization: draft.authorization });
      lifecycle.indexNonce(draft.nonceKey);
      // The payer will sign this exact nonce: it must not be posted again as a pre-signed authorization
      // for another order. Generation 2 drafts carry a keyed tag the pre-signed path refuses
      // (activities/draftNonce.ts); before, each draft claimed its nonce with a workflow.
      if (generation < 2) await claimNonce(input.orderId, draft.authorization, draft.nonceKey);
    }
  }

  policy ??= { ...(await shortReads().workerPolicy()), ...overrides };

  // Until the deadline (a durable timer at validBefore, not polling), wait for the watcher's nudge:
  // the payer may cancel elsewhere, or someone may settle a TransferWithAuthorization. A periodic
  // re-read of its own happens only when the worker asks for one (reconcileIntervalSeconds > 0).
  rollsOverWhileWaiting = generation >= 2 || patched('roll-over-after-commands');
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
    if (rollOverDue && !lifecycle.isFinal) await rollOver(input.orderId, lifecycle, policy, window, events, resumed);
    checkRequested = false;
    if (!lifecycle.isFinal && lifecycle.isResting && Date.now() < validBefore) await untilSettled(() => reconcile(lifecycle, window), 1);
    else if (settled && !lifecycle.isFinal) await condition(() => lifecycle.isResting || lifecycle.isFinal || lifecycle.matches({ capturing: 'releasing' }));
    if (shouldRollOver(lifecycle, policy)) await rollOver(input.orderId, lifecycle, policy, window, events, resumed);
  }

  // The last events (the final state's among them) are with the stream before this run ends.
  await condition(() => allHandlersFinished() && events.isDrained());
  return lifecycle.view();
}

/**
 * The draft. Generation 3 gives it a short budget of its own (its create's caller waits for it) and,
 * when the node does not answer in it, ends the attempt `rejected` with why (undefined): a node
 * outage ends no workflow failed, and leaves no record `drafting` for ever. Runs of earlier
 * generations replay as they ran.
 */
async function draftOrRefusal(
  lifecycle: Lifecycle,
  generation: number,
  request: Parameters<typeof draftReads.draftAuthorization>[0],
): Promise<Awaited<ReturnType<typeof draftReads.draftAuthorization>> | undefined> {
  if (generation < 3) return shortReads().draftAuthorization(request);
  return firstReadOrRefusal(lifecycle, generation, () => draftReads.draftAuthorization(request));
}

/**
 * The attempt's first read of the chain (the draft, or the pre-signed authorization's check). From
 * generation 3, one the node could not answer ends the attempt `rejected` with the reason, never a
 * FAILED workflow (generation 2 runs fail as they did).
 */
async function firstReadOrRefusal<T>(lifecycle: Lifecycle, generation: number, read: () => Promise<T>): Promise<T | undefined> {
  if (generation < 3) return read();
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
async function rollOver(
  orderId: string,
  lifecycle: Lifecycle,
  policy: WorkerPolicy,
  window: ChainWindow,
  events: EventPublisher,
  resumed?: ResumedAuthorization,
): Promise<never> {
  await condition(() => allHandlersFinished() && lifecycle.isResting && events.isDrained());
  const generation = currentGeneration();
  const next: AuthorizationWorkflowInput = {
    orderId,
    resume: {
      lifecycle: lifecycle.persisted(),
      policy,
      fromBlock: window.fromBlock,
      runs: (resumed?.runs ?? 0) + 1,
      ...(generation >= 2 ? { generation } : {}),
    },
  };
  // Generation 2 keeps its events in the memo: the next run starts with all of them (and its view).
  if (generation >= 2) return makeContinueAsNewFunc<(input: AuthorizationWorkflowInput) => Promise<AuthorizationView>>({ memo: workflowInfo().memo })(next);
  return continueAsNew<(input: AuthorizationWorkflowInput) => Promise<AuthorizationView>>(next);
}
