// Every input a workflow acts on is sealed by the payload codec (AES-GCM authenticates it). A
// Temporal client without the codec key can still send a start, a signal or an update: its payload
// reaches the workflow as the unsealed marker (runtime/codec.ts), and these interceptors refuse it
// where it arrives, before any handler sees it:
// - an update is rejected in validation: it leaves no trace in history;
// - a signal cannot be refused (it is in history already): it is dropped, and logged;
// - a start fails the workflow at once, before its code runs.
// (Activity arguments are checked on the worker's side: worker/sealedActivityInputs.ts.)
// What an operator sealed through the codec server (the Temporal UI, the `temporal` CLI) may only
// void: the one thing operators do from there.
import {
  ApplicationFailure,
  log,
  patched,
  type Next,
  type SignalInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
} from '@temporalio/workflow';
import { describeUnsealed, isOperatorSealed, isUnsealed } from '../domain/sealed.js';

/** Signals and updates an operator may send through the codec server. */
const OPERATOR_MESSAGES = new Set(['void']);
/**
 * Patch id: before it, a plain signal (the UI's JSON void) was acted on. Asked only when such a
 * signal arrives, so histories of sealed inputs carry no marker.
 */
export const SEALED_SIGNALS_PATCH = 'signals-must-be-sealed';

type Screened = { args: unknown[] } | { refused: string };

/** The arguments as the handler should see them, or why they are refused. `message`: the signal or update name. */
function screen(what: string, args: readonly unknown[], message?: string): Screened {
  let operator = false;
  const opened: unknown[] = [];
  for (const arg of args) {
    if (isUnsealed(arg)) return { refused: `${what}: ${describeUnsealed(arg)}` };
    if (isOperatorSealed(arg)) {
      operator = true;
      opened.push(arg.value);
    } else opened.push(arg);
  }
  if (operator && !(message && OPERATOR_MESSAGES.has(message))) return { refused: `${what}: an operator's input (sealed by the codec server) may only void` };
  return { args: opened };
}

function unauthenticated(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'unauthenticated_input', nonRetryable: true, message: `refused ${message}` });
}

// No method here is async: an extra await would move a handler's commands a microtask later, and
// replays of histories recorded without these interceptors would see them in another order.
class SealedInbound implements WorkflowInboundCallsInterceptor {
  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const screened = screen('the workflow input', input.args);
    if ('refused' in screened) return Promise.reject(unauthenticated(screened.refused));
    return next(input);
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    if (!input.args.some((arg) => isUnsealed(arg) || isOperatorSealed(arg))) return next(input);
    // Histories from before the rule acted on plain signals: they replay as they ran.
    if (!patched(SEALED_SIGNALS_PATCH)) return next(input);
    const screened = screen(`signal ${input.signalName}`, input.args, input.signalName);
    if ('refused' in screened) {
      log.warn('signal refused: not sealed by the payload codec', { why: screened.refused });
      return Promise.resolve();
    }
    return next({ ...input, args: screened.args });
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    const screened = screen(`update ${input.name}`, input.args, input.name);
    if ('refused' in screened) throw unauthenticated(screened.refused);
    next({ ...input, args: screened.args });
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    if (!input.args.some((arg) => isUnsealed(arg) || isOperatorSealed(arg))) return next(input);
    // Validation refused anything unsealed: what is left is to unwrap an operator's void. (A replay
    // of a history from before the rule may hold a plain update it accepted: it replays as it ran.)
    const screened = screen(`update ${input.name}`, input.args, input.name);
    if ('refused' in screened) {
      if (!patched(SEALED_SIGNALS_PATCH)) return next(input);
      return Promise.reject(unauthenticated(screened.refused));
    }
    return next({ ...input, args: screened.args });
  }
}

export const sealedInboundInterceptor = (): WorkflowInboundCallsInterceptor => new SealedInbound();
