// Every input a workflow acts on is sealed by the payload codec (AES-GCM authenticates it) for its
// place: this workflow, or the activity this workflow scheduled (runtime/codec.ts). A Temporal client
// without the codec key can still send a start, a signal or an update, plain or copied out of
// another history: its payload reaches the workflow as the unsealed marker, and these interceptors
// refuse it where it arrives, before any handler sees it:
// - an update is rejected in validation: it leaves no trace in history;
// - a signal cannot be refused (it is in history already): it is dropped, and logged;
// - a start fails the workflow at once, before its code runs;
// - an activity's result (a rogue worker answering the task) fails that activity: the workflow then
//   asks the chain, as after any failed activity.
// (Activity arguments are checked on the worker's side: worker/sealedActivityInputs.ts.)
// What an operator sealed through the codec server (the Temporal UI, the `temporal` CLI) may only
// void, and only the authorization it names: the codec server cannot see where it is sent.
import {
  type ActivateInput,
  type ActivityInput,
  ApplicationFailure,
  defaultPayloadConverter,
  type Payload,
  log,
  type Next,
  type SignalInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInternalsInterceptor,
  type WorkflowOutboundCallsInterceptor,
  workflowInfo,
} from '@temporalio/workflow';
import { describeUnsealed, isOperatorSealed, isUnsealed, SEAL_MARKER } from '../domain/sealed.js';
import { workflowIdForOrder } from '../domain/ids.js';

/** Signals and updates an operator may send through the codec server. */
const OPERATOR_MESSAGES = new Set(['void']);

type Screened = { args: unknown[] } | { refused: string };

/** Does this operator's input name this workflow (`orderId` of an authorization, or `workflowId`)? */
function namesThisWorkflow(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { orderId, workflowId } = value as { orderId?: unknown; workflowId?: unknown };
  const here = workflowInfo().workflowId;
  return (typeof workflowId === 'string' && workflowId === here) || (typeof orderId === 'string' && workflowIdForOrder(orderId) === here);
}

/** The arguments as the handler should see them, or why they are refused. `message`: the signal or update name. */
function screen(what: string, args: readonly unknown[], message?: string): Screened {
  let operator = false;
  let merchant = false;
  const opened: unknown[] = [];
  for (const arg of args) {
    if (isUnsealed(arg)) return { refused: `${what}: ${describeUnsealed(arg)}` };
    if (isOperatorSealed(arg)) {
      operator = true;
      if (!(message && OPERATOR_MESSAGES.has(message))) return { refused: `${what}: an operator's input (sealed by the codec server) may only void` };
      if (!namesThisWorkflow(arg.value)) return { refused: `${what}: an operator's input must name this authorization ("orderId")` };
      opened.push(arg.value);
    } else {
      merchant = true;
      opened.push(arg);
    }
  }
  if (operator && !(message && OPERATOR_MESSAGES.has(message))) return { refused: `${what}: an operator's input (sealed by the codec server) may only void` };
  // authcap voids through the update; the signal is the operator's (the Temporal UI's) alone.
  if (merchant && message === 'void' && what.startsWith('signal')) return { refused: `${what}: the void signal takes only an operator's input` };
  return { args: opened };
}

function unauthenticated(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'unauthenticated_input', nonRetryable: true, message: `refused ${message}` });
}

// No method here is async: an extra await would move a handler's commands a microtask later than
// the workflow code that runs beside it expects them.
class SealedInbound implements WorkflowInboundCallsInterceptor {
  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const screened = screen('the workflow input', input.args);
    if ('refused' in screened) return Promise.reject(unauthenticated(screened.refused));
    return next(input);
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    const marked = input.args.some((arg) => isUnsealed(arg) || isOperatorSealed(arg));
    if (!marked && input.signalName !== 'void') return next(input);
    const screened = screen(`signal ${input.signalName}`, input.args, input.signalName);
    if (!('refused' in screened)) return next({ ...input, args: screened.args });
    log.warn('signal refused', { signal: input.signalName, why: screened.refused });
    return Promise.resolve();
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    // Validators run only for new updates, never on replay: every rule applies.
    const screened = screen(`update ${input.name}`, input.args, input.name);
    if ('refused' in screened) throw unauthenticated(screened.refused);
    next({ ...input, args: screened.args });
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    if (!input.args.some((arg) => isUnsealed(arg) || isOperatorSealed(arg))) return next(input);
    // Validation refused anything it should: what is left is to unwrap an operator's void.
    const screened = screen(`update ${input.name}`, input.args, input.name);
    if (!('refused' in screened)) return next({ ...input, args: screened.args });
    return Promise.reject(unauthenticated(screened.refused));
  }
}

/** Each activity's type by its sequence number, while it runs: what a refused result's failure names. */
const scheduled = new Map<number, { activityType: string; activityId: string }>();

const RETRY_STATE_NON_RETRYABLE_FAILURE = 2;
const MARK = `"${SEAL_MARKER}"`;

type ResultPayload = { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null };
/** The marker's key as it appears in a JSON payload's bytes (ASCII). */
const MARK_BYTES = Array.from(MARK, (c) => c.charCodeAt(0));

/** Whether the bytes hold the marker's key: only then is the payload read (results are large, markers rare). */
function holdsMark(data: Uint8Array): boolean {
  const first = MARK_BYTES[0]!;
  outer: for (let i = data.indexOf(first); i !== -1 && i <= data.length - MARK_BYTES.length; i = data.indexOf(first, i + 1)) {
    for (let j = 1; j < MARK_BYTES.length; j++) if (data[i + j] !== MARK_BYTES[j]) continue outer;
    return true;
  }
  return false;
}

/** Why an activity's decoded result payload is refused (plain, copied from elsewhere, an operator's), if it is. */
function screenResult(payload: ResultPayload | null | undefined): { refused: string } | undefined {
  const data = payload?.data;
  if (!payload || !data || !holdsMark(data)) return undefined;
  let value: unknown;
  try {
    value = defaultPayloadConverter.fromPayload(payload as Payload);
  } catch {
    return { refused: 'a result that cannot be read' };
  }
  if (isUnsealed(value)) return { refused: describeUnsealed(value) };
  if (isOperatorSealed(value)) return { refused: "an operator's input" };
  return undefined;
}

/**
 * An activity's result is believed only when it was sealed for that activity: a rogue worker that
 * answers the task with a result copied from elsewhere (or a plain one) fails the activity instead,
 * and the workflow goes on as after any failed activity (the chain has the last word). Done on the
 * activation, before the workflow sees it, so the result reaches the code at the same moment as ever.
 */
class SealedResults implements WorkflowInternalsInterceptor {
  activate(input: ActivateInput, next: Next<WorkflowInternalsInterceptor, 'activate'>): void {
    const jobs = input.activation.jobs;
    if (!jobs?.some((job) => job.resolveActivity)) {
      next(input);
      return;
    }
    for (const job of jobs) {
      const resolved = job.resolveActivity;
      if (!resolved) continue;
      const seq = resolved.seq ?? 0;
      const known = scheduled.get(seq);
      if (!resolved.result?.backoff) scheduled.delete(seq);
      const screened = screenResult(resolved.result?.completed?.result);
      if (screened === undefined) continue;
      // In place: the jobs are protobuf messages whose `variant` the SDK reads (a copy would lose it).
      const why = screened.refused;
      log.warn('activity result refused', { seq, why });
      const activityType = known?.activityType ?? 'unknown';
      resolved.result = {
        failed: {
          failure: {
            message: 'Activity task failed',
            activityFailureInfo: {
              activityType: { name: activityType },
              activityId: known?.activityId ?? String(seq),
              retryState: RETRY_STATE_NON_RETRYABLE_FAILURE,
            },
            cause: { message: `refused the result of ${activityType}: ${why}`, applicationFailureInfo: { type: 'unauthenticated_input', nonRetryable: true } },
          },
        },
      };
    }
    next(input);
  }
}

/**
 * The activity's id: its sequence number and this run. A sequence number alone starts again at 1 in
 * every run of a workflow id (a continue-as-new, a start after a termination); the codec binds an
 * activity's payloads to its workflow id and activity id (Temporal's serialization context names no
 * run), so with the run in the id a result sealed in one run does not open in another.
 */
function runBound(input: ActivityInput): ActivityInput {
  if (input.options.activityId !== undefined) return input;
  return { ...input, options: { ...input.options, activityId: `${input.seq}@${workflowInfo().runId}` } };
}

const sealedOutbound: WorkflowOutboundCallsInterceptor = {
  scheduleActivity(original, next) {
    const input = runBound(original);
    scheduled.set(input.seq, { activityType: input.activityType, activityId: input.options.activityId ?? String(input.seq) });
    return next(input);
  },
  scheduleLocalActivity(input, next) {
    scheduled.set(input.seq, { activityType: input.activityType, activityId: String(input.seq) });
    return next(input);
  },
};

export const sealedResultsInterceptor = (): WorkflowInternalsInterceptor => new SealedResults();
export const sealedInboundInterceptor = (): WorkflowInboundCallsInterceptor => new SealedInbound();
export const sealedOutboundInterceptor = (): WorkflowOutboundCallsInterceptor => sealedOutbound;
