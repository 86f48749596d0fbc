// `authorizations.wait`: the authorization once its state differs from `state` (default: its state
// now), or as it stands after `waitSeconds` (at most 30): wait for a capture, a signature or a
// cancellation without polling. Every wait on one authorization in this process shares one watch of
// it (watchHub.ts): the memo read as `get` reads it, woken by Temporal's history long poll.
import type { AuthorizationResource } from '../../domain/authorization.js';
import { AuthcapError } from '../../domain/errors.js';
import { parseState } from '../requests.js';
import { get } from './get.js';
import type { ReadContext } from './readModel.js';
import type { WaitOptions } from './types.js';
import { MAX_WAIT_SECONDS, WatchHub } from './watchHub.js';

export interface WaitContext {
  watches: WatchHub;
}

/** The watches of one client's waits. */
export function watchesFor(ctx: ReadContext): WatchHub {
  return new WatchHub({
    read: (id) => get(ctx, id),
    changes: (id, signal) => ctx.transport.historyChanges(id, signal),
  });
}

export async function wait(ctx: WaitContext, id: string, options: WaitOptions): Promise<AuthorizationResource> {
  if (!Number.isFinite(options?.waitSeconds) || options.waitSeconds < 0 || options.waitSeconds > MAX_WAIT_SECONDS) {
    throw new AuthcapError('validation_error', `wait must be from 0 to ${MAX_WAIT_SECONDS} seconds`, { field: 'wait' });
  }
  const knownState = options.state === undefined ? undefined : parseState(options.state);
  return ctx.watches.wait(id, { waitSeconds: options.waitSeconds, knownState });
}
