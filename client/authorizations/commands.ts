// How a command reaches an attempt's workflow: as an update, bounded (a missing worker is told apart
// from a missing server), asked again only when the server let it go unapplied, and answered
// `invalid_state` when the authorization is already final.
import type { WorkflowHandle } from '@temporalio/client';
import { AuthcapError } from '../../domain/errors.js';
import { AuthorizationStateAttribute } from '../../domain/searchAttributes.js';
import type { AuthorizationView } from '../../domain/authorization.js';
import { authorizationBusy, toAuthcapError } from '../transport/errors.js';
import type { TemporalTransport } from '../transport/temporalTransport.js';
import { get } from './get.js';
import type { ReadContext } from './readModel.js';
import type { CaptureOutcome } from './types.js';
import { asResource } from '../../domain/captures.js';

/** How long a command's wait for its outcome lasts unless the caller says (capture, cancel). */
const DEFAULT_COMMAND_WAIT_MS = 15_000;

/**
 * Runs an update. Temporal answers an update to a finished workflow with "not found"; callers
 * need to hear that the authorization exists but is final, so that becomes invalid_state.
 */
export async function command<T>(transport: TemporalTransport, handle: WorkflowHandle, action: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await update(transport, fn);
  } catch (err) {
    if (!(err instanceof AuthcapError) || err.code !== 'not_found') throw err;
    const description = await transport.server(() => handle.describe());
    const state = description.typedSearchAttributes.get(AuthorizationStateAttribute) ?? 'closed';
    throw new AuthcapError('invalid_state', `cannot ${action}: the authorization is ${state}`);
  }
}

/** Starts an update, then waits at most `waitMs` for its outcome; past that the workflow carries on. */
export async function boundedCommand(
  ctx: ReadContext,
  id: string,
  handle: WorkflowHandle,
  action: 'capture' | 'cancel',
  start: () => Promise<{ result(): Promise<AuthorizationView> }>,
  waitMs = DEFAULT_COMMAND_WAIT_MS,
): Promise<CaptureOutcome> {
  const accepted = await command(ctx.transport, handle, action, start);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), waitMs);
  });
  try {
    const view = await Promise.race([accepted.result(), timedOut]).catch((err: unknown) => {
      throw toAuthcapError(err);
    });
    if (view) return { authorization: asResource(id, view), settled: true };
    const current = await get(ctx, id);
    // The workflow accepted the command and is still on it, but its record may not say so yet: the
    // record is written when the workflow's task ends, and a chain read the node does not answer
    // holds that task. The answer says what is under way, never the resting state it left.
    const underWay = ({ capture: 'capturing', cancel: 'canceling' } as const)[action];
    const resting = current.state === 'stored' || current.state === 'drafted';
    return { authorization: resting ? { ...current, state: underWay } : current, settled: false };
  } finally {
    clearTimeout(timer);
  }
}

/** An update that needs a worker: bounded, and a missing worker is told apart from a missing server. */
async function update<T>(transport: TemporalTransport, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await transport.worker(fn, 30_000);
    } catch (err) {
      // The server drops an update a workflow task carried but did not answer (a burst of updates at
      // one workflow, a task that failed): nothing was applied, so asking again is safe.
      if (!isUpdateNotProcessed(err) || attempt >= 3) throw isUpdateNotProcessed(err) ? authorizationBusy() : err;
    }
  }
}

/**
 * An update the server let go of without applying it: one a task carried but did not answer, or one
 * whose task failed (the server drops that task's effects). Never an aborted one: the server aborts
 * accepted updates too, and asking again (a new update id) would apply it twice.
 */
function isUpdateNotProcessed(err: unknown): boolean {
  return err instanceof AuthcapError && err.code === 'internal_error' && /wasn't processed by worker|unexpected workflow task failure/i.test(err.message);
}
