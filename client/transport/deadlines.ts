// Bounds on every call the client library makes to Temporal, and what a missed bound means. A caller
// must hear "Temporal is down" or "no worker is answering" within seconds, not hang behind a retry loop.
import type { Client } from '@temporalio/client';
import { AuthcapError } from '../../domain/errors.js';
import { toAuthcapError } from './errors.js';

/** Short server calls (describe, start, list, signal): under the 5 s a caller is promised. */
export const SERVER_CALL_MS = 3_000;
/** Waiting for a worker to accept an update (it must pick up a workflow task first). */
export const ACCEPT_UPDATE_MS = 10_000;

export function isDeadlineOrUnavailable(err: unknown): boolean {
  const code = (err as { code?: number })?.code ?? (err as { cause?: { code?: number } })?.cause?.code;
  // gRPC: 4 DEADLINE_EXCEEDED, 14 UNAVAILABLE, and 1 CANCELLED: authcap never cancels a call itself,
  // so a CANCELLED is the server resetting the stream of a call whose deadline it reached first.
  return code === 1 || code === 4 || code === 14 || /deadline exceeded|unavailable|ECONNREFUSED|connect/i.test(String((err as Error)?.message ?? ''));
}

/**
 * The gRPC deadline, and a clock of our own beside it: under load a reconnecting channel can
 * overrun its deadline by seconds, and the caller was promised an answer in time.
 */
export async function withDeadline<T>(temporal: Client, ms: number, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('deadline exceeded'), { code: 4 })), ms + 250);
  });
  try {
    return await Promise.race([track(temporal, temporal.connection.withDeadline(Date.now() + ms, fn)), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Calls our own clock gave up on can still sit in the gRPC library's retry backoff (up to ~6 s,
 * then one last attempt that fails on its deadline). Closing the channel under such a call makes
 * the retry timer throw "Channel has been shut down" as an uncaught exception, so a client closes
 * only once they have all settled.
 */
const inFlight = new WeakMap<Client, Set<Promise<unknown>>>();
/** How long the retry interceptor's longest backoff (5 s + 20 % jitter) can keep a call alive. */
const LONGEST_RETRY_BACKOFF_MS = 6_500;

function track<T>(temporal: Client, call: Promise<T>): Promise<T> {
  let calls = inFlight.get(temporal);
  if (!calls) inFlight.set(temporal, (calls = new Set()));
  const settled = call.then(
    () => undefined,
    () => undefined,
  );
  calls.add(settled);
  void settled.then(() => calls.delete(settled));
  return call;
}

/** Waits (bounded) for calls still retrying inside the gRPC library, then closes the connection. */
export async function closeWhenSettled(temporal: Client): Promise<void> {
  const calls = [...(inFlight.get(temporal) ?? [])];
  if (calls.length > 0) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(calls), new Promise((r) => (timer = setTimeout(r, LONGEST_RETRY_BACKOFF_MS + 1_000)))]);
    clearTimeout(timer);
  }
  await temporal.connection.close();
}

/** A server call: its failure to answer in time is `temporal_unavailable` (503 with Retry-After). */
export async function serverCall<T>(temporal: Client, fn: () => Promise<T>, ms = SERVER_CALL_MS): Promise<T> {
  try {
    return await withDeadline(temporal, ms, fn);
  } catch (err) {
    if (isDeadlineOrUnavailable(err) && !(err instanceof AuthcapError)) {
      throw new AuthcapError('temporal_unavailable', 'Temporal is not reachable right now; retry shortly');
    }
    throw toAuthcapError(err);
  }
}

const lastAnswered = new WeakMap<Client, number>();

async function reachable(temporal: Client, ping: () => Promise<unknown>): Promise<void> {
  if (Date.now() - (lastAnswered.get(temporal) ?? 0) < 1_000) return;
  try {
    await ping();
    lastAnswered.set(temporal, Date.now());
  } catch (err) {
    if (err instanceof AuthcapError) throw err;
    throw new AuthcapError('temporal_unavailable', 'Temporal is not reachable right now; retry shortly');
  }
}

/**
 * A call that needs a worker (an update's acceptance). When it times out, ask the server itself:
 * if Temporal answers, it is the workers that are missing.
 */
export async function workerCall<T>(temporal: Client, ping: () => Promise<unknown>, fn: () => Promise<T>, ms = ACCEPT_UPDATE_MS): Promise<T> {
  // An update to an unreachable server would wait out its whole deadline: a cheap ping beside it
  // tells "Temporal is down" within seconds (skipped while the server answered a moment ago).
  await reachable(temporal, ping);
  try {
    const result = await withDeadline(temporal, ms, fn);
    lastAnswered.set(temporal, Date.now());
    return result;
  } catch (err) {
    if (err instanceof AuthcapError || !isDeadlineOrUnavailable(err)) throw toAuthcapError(err);
    await serverCall(temporal, ping);
    throw new AuthcapError(
      'worker_unavailable',
      'no authcap worker answered in time; the request may still be applied when one returns: read the authorization before retrying',
    );
  }
}
