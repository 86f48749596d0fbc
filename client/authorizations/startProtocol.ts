// One order, one charge: how a new authorization attempt starts. The order's workflow id is the
// lock: an order has one open attempt at a time, and a new one may start only after every earlier one
// ended without moving money. The common create is one round trip (update-with-start on a free id);
// only an order that had an attempt before pays for the look at it.
import { WithStartWorkflowOperation, type WorkflowExecutionDescription, type WorkflowExecutionInfo } from '@temporalio/client';
import { VIEW_MEMO_KEY, finalStates, type AuthorizationResource, type AuthorizationView, type AuthorizationWorkflowInput } from '../../domain/authorization.js';
import { AuthcapError } from '../../domain/errors.js';
import { resourceId, workflowIdForOrder } from '../../domain/ids.js';
import { sealedEntries } from '../../domain/sealed.js';
import {
  AmountMinorAttribute,
  AuthorizationStateAttribute,
  NetworkAttribute,
  OrderIdAttribute,
  PayerAttribute,
  ResourceAttribute,
  TokenAttribute,
} from '../../domain/searchAttributes.js';
import { WORKFLOW_TYPE, draftReadyUpdate, type DraftReady } from '../../workflows/messages.js';
import { toAuthcapError } from '../transport/errors.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { quote } from '../visibilityQuery.js';
import { get } from './get.js';
import { firstRunIdOf, type ReadContext } from './readModel.js';
import { asResource } from '../../domain/captures.js';

/** How long a create waits for a final authorization's workflow to close (normally one workflow task). */
const CLOSING_WAIT_MS = 5_000;
/** How many runs of an order's id a new attempt looks at when the latest did not complete. */
const MAX_RUNS_LOOKED_AT = 1_000;

export interface NewAttempt {
  orderId: string;
  payer: string;
  /** The amount in the token's smallest unit (search attribute AmountMinor). */
  value: bigint;
  input: AuthorizationWorkflowInput;
  /** What it pays for (an x402 resource's URL): searchable, never read by the workflow. */
  resource?: string;
}

/**
 * Starts the order's next attempt and resolves once its draft (or its stored pre-signed
 * authorization) exists. `first`: the order's first attempt is started at once, refused by Temporal
 * itself if the order has any run already (its id is taken), so the common create asks nothing
 * before it starts; a refused one comes back here to look at the earlier attempt first.
 */
export async function startAttempt(ctx: ReadContext, attempt: NewAttempt, retried = false, first = true): Promise<AuthorizationResource> {
  const { transport } = ctx;
  const { orderId, payer, value, input } = attempt;
  const workflowId = workflowIdForOrder(orderId);
  const chain = 'chain' in input ? input.chain : undefined;
  // Operators search and sort by AmountMinor (an integer attribute): an amount it cannot hold exactly
  // is refused for 6-decimal tokens (no payment is that large); an 18-decimal token's amounts pass
  // 2^53 minor units at 0.009 of a token, so theirs are recorded only while exact.
  const exact = value <= BigInt(Number.MAX_SAFE_INTEGER);
  if (!exact && (chain?.decimals ?? 6) <= 6) {
    throw new AuthcapError('validation_error', `amount is larger than authcap records (at most ${Number.MAX_SAFE_INTEGER} minor units)`);
  }
  // One order, one charge: a new attempt is allowed only after one that moved no money.
  const previous = first ? undefined : await untilClosedIfFinal(transport, workflowId, await transport.describeIfExists(workflowId));
  if (previous && previous.status.name !== 'RUNNING') await refuseIfAnyRunCaptured(transport, orderId, workflowId, previous);
  // One round trip: the start and the first update travel together (update-with-start), and the
  // update is answered in the workflow's first task, once the draft (or the refusal) exists.
  const startOperation = new WithStartWorkflowOperation(WORKFLOW_TYPE, {
    taskQueue: transport.taskQueue,
    workflowId,
    // Stamped now, not when the order was first looked at: the run refuses a start long after it.
    args: [{ ...input, requestedAt: new Date().toISOString() }],
    // One open authorization per order; a new attempt may start once the previous one is final (and
    // moved no money, which the look above decided). A first try takes only a free id.
    workflowIdReusePolicy: first ? 'REJECT_DUPLICATE' : 'ALLOW_DUPLICATE',
    workflowIdConflictPolicy: 'FAIL',
    typedSearchAttributes: [
      { key: OrderIdAttribute, value: orderId },
      { key: PayerAttribute, value: payer },
      { key: AuthorizationStateAttribute, value: 'drafting' },
      ...(exact ? [{ key: AmountMinorAttribute, value: Number(value) }] : []),
      ...(attempt.resource ? [{ key: ResourceAttribute, value: attempt.resource }] : []),
      ...(chain
        ? [
            { key: NetworkAttribute, value: chain.network },
            { key: TokenAttribute, value: chain.token.toLowerCase() },
          ]
        : []),
    ],
  });
  let view: DraftReady | undefined;
  let failed: AuthcapError | undefined;
  try {
    // Sent once, never retried here: a start operation cannot be sent twice.
    view = await transport.worker(() => transport.workflow.executeUpdateWithStart(draftReadyUpdate, { startWorkflowOperation: startOperation }), 30_000);
  } catch (err) {
    failed = toAuthcapError(err);
  }
  // The answer names the run; without an answer (the update failed, the run may have ended) the
  // run's description does.
  const handle = view?.firstRunId ? undefined : await startOperation.workflowHandle().catch(() => undefined);
  const started = view?.firstRunId ?? (handle ? firstRunIdOf(await transport.server(() => handle.describe())) : undefined);
  if (!started) {
    // The id is taken (an earlier attempt, open or closed): look at it, then try as a later attempt.
    if (first && failed?.code === 'order_has_open_authorization') return startAttempt(ctx, attempt, retried, false);
    if (failed?.code === 'order_has_open_authorization') {
      const open = await transport.describeIfExists(workflowId);
      // It became final after we looked: once it has closed, this is a new attempt after all.
      if (!retried && open && isFinalRun(open)) return startAttempt(ctx, attempt, true, false);
      throw new AuthcapError('order_has_open_authorization', `order ${orderId} already has an open authorization`, {
        id: resourceId(orderId, open ? firstRunIdOf(open) : ''),
      });
    }
    throw failed ?? new AuthcapError('internal_error', 'the authorization did not start');
  }
  const runId = started;
  // The previous attempt was still running when we looked and may have ended captured since:
  // look again, and withdraw this attempt if it did.
  if (previous && previous.status.name === 'RUNNING') {
    const settled = await transport.describe(workflowId, previous.runId);
    try {
      refuseIfCaptured(orderId, settled);
    } catch (err) {
      await transport.server(() => transport.workflow.getHandle(workflowId, runId).terminate('the order was captured by an earlier attempt'));
      throw err;
    }
  }
  const id = resourceId(orderId, runId);
  if (view) {
    const { firstRunId: _, ...stored } = view;
    return asResource(id, stored);
  }
  // A refused pre-signed authorization can end its workflow (rejected) before the update's answer
  // is read back; the workflow's own record then says why.
  if (failed?.code !== 'not_found') throw failed!;
  const ended = await get(ctx, id);
  if (ended.state === 'rejected' && ended.lastError) throw new AuthcapError(ended.lastError.code, ended.lastError.message);
  return ended;
}

/** Still running, but its state is final: it is handing over its last events and closing. */
function isFinalRun(run: WorkflowExecutionDescription): boolean {
  const state = run.typedSearchAttributes.get(AuthorizationStateAttribute);
  return run.status.name === 'RUNNING' && state !== undefined && (finalStates as readonly string[]).includes(state);
}

/**
 * A final authorization's workflow closes a moment after its final answer, once its handlers have
 * finished: a new attempt right after a void (or the refusal after a capture) waits for that
 * rather than calling the order still open.
 */
async function untilClosedIfFinal(
  transport: TemporalTransport,
  workflowId: string,
  run: WorkflowExecutionDescription | undefined,
): Promise<WorkflowExecutionDescription | undefined> {
  const deadline = Date.now() + CLOSING_WAIT_MS;
  while (run && isFinalRun(run) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    run = await transport.describeIfExists(workflowId);
  }
  return run;
}

/**
 * Only a run that completed ran authcap's code to its end: its memo is its own. The latest run ended
 * otherwise (failed at its first task, a start nobody authcap sealed; terminated) says nothing of
 * the order's earlier attempts, and a start can carry a memo copied from one of them: every run of
 * the id is looked at then, and one that captured refuses the new attempt.
 */
async function refuseIfAnyRunCaptured(transport: TemporalTransport, orderId: string, workflowId: string, latest: WorkflowExecutionDescription): Promise<void> {
  if (latest.status.name === 'COMPLETED') return refuseIfCaptured(orderId, latest);
  let looked = 0;
  for await (const run of transport.workflow.list({ query: `WorkflowId = ${quote(workflowId)}`, pageSize: 100 })) {
    refuseIfCaptured(orderId, run);
    // Each run someone starts under the id costs them a start; the look stops somewhere all the same.
    if (++looked >= MAX_RUNS_LOOKED_AT) break;
  }
  refuseIfCaptured(orderId, latest);
}

function refuseIfCaptured(orderId: string, run: WorkflowExecutionDescription | WorkflowExecutionInfo): void {
  // The sealed memo says what the run was; search attributes are whatever its starter set. A run
  // whose input nobody sealed fails at once (workflows/sealedInputs.ts) and charged nobody.
  const view = sealedEntries(run.memo)?.[VIEW_MEMO_KEY] as AuthorizationView | undefined;
  const state = view ? view.state : run.status.name === 'FAILED' ? undefined : run.typedSearchAttributes.get(AuthorizationStateAttribute);
  if (state === 'captured') {
    throw new AuthcapError('order_already_captured', `order ${orderId} was already paid by an earlier authorization; a new one would charge twice`, {
      id: resourceId(orderId, firstRunIdOf(run)),
    });
  }
}
