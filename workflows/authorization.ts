// One workflow per authorization attempt, read as its lifecycle (docs/lifecycle.md): open it (draft
// the typed data, or take a pre-signed authorization), take the merchant's and the payer's commands,
// and end when the chain settles it or its deadline expires it, rolling over whenever history grows
// long. The machine (workflows/machine.ts) decides every step; the modules beside this one carry them.
import { allHandlersFinished, condition, log } from '@temporalio/workflow';
import type { WorkerPolicy } from '../domain/activityContract.js';
import type { AuthorizationView, AuthorizationWorkflowInput } from '../domain/authorization.js';
import { acceptCommands, type Inbox } from './authorizationHandlers.js';
import { chainRefOf, useChain } from './chainHeader.js';
import { failureOf } from './failures.js';
import { refusedStart, staleStart } from './freshStart.js';
import { Lifecycle, type PersistedLifecycle } from './lifecycle.js';
import { openAuthorization, requestOf } from './openAuthorization.js';
import { completePartialCapture } from './partialCaptureRelease.js';
import { expireAtDeadline, reconcile, type ChainWindow } from './procedures.js';
import { createRelayClient, type Relay } from './relayClient.js';
import { rollOver, shouldRollOver } from './rollOver.js';

const now = () => new Date().toISOString();

export async function authorizationWorkflow(input: AuthorizationWorkflowInput): Promise<AuthorizationView> {
  // Only the API's fresh start, or this run's own continue-as-new: a start input copied out of an
  // earlier run's history (the id terminated, then started again) would capture or follow again.
  const stale = staleStart('requestedAt' in input ? input : {}, 'resume' in input);
  if (stale) throw refusedStart(stale);
  const resumed = 'resume' in input ? input.resume : undefined;
  const lifecycle = 'resume' in input ? Lifecycle.resume(input.resume.lifecycle as PersistedLifecycle, now) : Lifecycle.begin(requestOf(input), now);
  // Every activity runs on this authorization's network and token (workflows/chainHeader.ts says why
  // this one setting is module-level); amounts are in its decimals, which every step reads from the context.
  useChain(chainRefOf(lifecycle.context.chain));
  const window: ChainWindow = { fromBlock: resumed?.fromBlock };
  const relay = createRelayClient();
  const inbox = acceptCommands(lifecycle, relay, window);

  // Open: the draft (or the pre-signed check). A first read the node could not answer ends the attempt `rejected`.
  const policy = 'resume' in input ? input.resume.policy : await openAuthorization(input, lifecycle, window);
  if (!policy) return finish(lifecycle);
  inbox.policy = policy;

  // Commands move it through their handlers meanwhile. Until the deadline (a durable timer at
  // validBefore, not polling) the loop waits for the watcher's nudge: the payer may cancel elsewhere,
  // or someone may settle a TransferWithAuthorization. A periodic re-read of its own happens only
  // when the worker asks for one (reconcileIntervalSeconds > 0).
  const deadline = lifecycle.context.authorization ? Number(lifecycle.context.authorization.validBefore) * 1000 : Date.now();
  const roll = () => rollOver(input.orderId, lifecycle, policy, window, resumed?.runs ?? 0);
  const holdTimers = {};
  while (!lifecycle.isFinal) {
    // A hold is carried by its own steps (docs/holds.md): placed once signed, then its parts and its void.
    if (lifecycle.context.hold && (lifecycle.matches('holding') || lifecycle.matches('held'))) {
      await holdStep(lifecycle, relay, () => inbox.checkRequested || inbox.rollOverDue, holdTimers);
      inbox.checkRequested = false;
      // A hold lives for days and takes many parts: it rolls over between them, with nothing under way.
      if ((inbox.rollOverDue || shouldRollOver(lifecycle, policy)) && holdAtRest(lifecycle)) await roll();
      continue;
    }
    // The chain settled a partial capture that no command is following (its own gave up, or a
    // deadline or watcher check found the nonce used): the rest goes back to the payer first.
    if (lifecycle.matches({ capturing: 'releasing' })) {
      await completePartialCapture(lifecycle, relay);
      continue;
    }
    // Expire: at validBefore, once no command is in flight, the chain says what really happened.
    const untilDeadline = deadline - Date.now();
    if (untilDeadline <= 0) {
      await untilSettled(() => expireAtDeadline(lifecycle, window));
      continue;
    }
    const woken = await waitForNews(lifecycle, inbox, policy, untilDeadline);
    // The signature of a hold was checked meanwhile: the hold's own steps take it from here.
    if (lifecycle.matches('holding')) continue;
    // Commands grow history while the loop waits: roll over as soon as it is long, whatever the state.
    if (inbox.rollOverDue && !lifecycle.isFinal) await roll();
    inbox.checkRequested = false;
    // Settle: the chain may have consumed the nonce (the payer canceled, someone captured it).
    await readChainOrWait(lifecycle, window, woken, deadline);
    if (shouldRollOver(lifecycle, policy)) await roll();
  }
  return finish(lifecycle);
}

/**
 * After a wake: a resting authorization reads its nonce's fate once (a failed read waits for the
 * next wake); one with a command in flight waits for the command to finish.
 */
async function readChainOrWait(lifecycle: Lifecycle, window: ChainWindow, woken: boolean, deadline: number): Promise<void> {
  if (lifecycle.isFinal) return;
  if (lifecycle.isResting && Date.now() < deadline) return untilSettled(() => reconcile(lifecycle, window), 1);
  if (woken) await condition(() => lifecycle.isResting || lifecycle.isFinal || lifecycle.matches({ capturing: 'releasing' }));
}

/** Until something happens: the authorization ends, the watcher nudges, history grows long, or the next periodic check (or the deadline) is due. */
function waitForNews(lifecycle: Lifecycle, inbox: Inbox, policy: WorkerPolicy, untilDeadline: number): Promise<boolean> {
  const period = policy.reconcileIntervalSeconds > 0 ? policy.reconcileIntervalSeconds * 1000 : untilDeadline;
  // A hold's checked signature wakes it too: the loop places the hold.
  return condition(() => lifecycle.isFinal || inbox.checkRequested || inbox.rollOverDue || lifecycle.matches('holding'), Math.min(untilDeadline, period));
}

/** A held payment with no part or void under way and every command answered: it may roll over. */
function holdAtRest(lifecycle: Lifecycle): boolean {
  const underWay = lifecycle.context.hold?.captures.some((c) => c.stage === 'pending' || c.stage === 'submitted');
  return lifecycle.matches({ held: 'open' }) && !underWay && allHandlersFinished();
}

/** One step of a hold. Loaded only by authorizations that hold: the sandbox evaluates every module a workflow imports. */
async function holdStep(lifecycle: Lifecycle, relay: Relay, news: () => boolean, timers: object): Promise<void> {
  if (lifecycle.matches('holding')) {
    const { placeHold } = await import(/* webpackMode: "eager" */ './holdProcedure.js');
    return placeHold(lifecycle, relay);
  }
  const { driveHeld } = await import(/* webpackMode: "eager" */ './heldProcedure.js');
  return driveHeld(lifecycle, relay, news, timers);
}

/** The run ends once the last command has had its answer. */
async function finish(lifecycle: Lifecycle): Promise<AuthorizationView> {
  await condition(allHandlersFinished);
  return lifecycle.view();
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
