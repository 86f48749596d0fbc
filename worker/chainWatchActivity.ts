// The activity of a network's watcher workflow (workflows/chainWatcher.ts): runs the log watcher for a
// slice of time on this worker, heartbeating the last block it has fully handled, and returns it. A
// retried attempt, on whichever worker Temporal gives it to, starts from the last heartbeat: the
// blocks after it are read again, and their logs nudge nobody twice (worker/nudgeOnce.ts).
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { ChainContexts } from '../activities/chainRouting.js';
import type { ChainWatchActivities, ChainWatchProgress } from '../domain/chainWatcher.js';
import { startWatcher } from './watcher.js';

/** How long one attempt watches before it hands its cursor to the workflow (which records it). */
export const WATCH_SLICE_MS = 5 * 60_000;
/** Well inside the workflow's heartbeat timeout (the SDK sends at most one per 80 % of it). */
const HEARTBEAT_EVERY_MS = 2_000;

export interface ChainWatchDependencies {
  client: Client;
  contexts: ChainContexts;
  wsUrlOf(network: string): string | undefined;
  pollIntervalMs?: number;
}

export function createChainWatchActivities(deps: ChainWatchDependencies): ChainWatchActivities {
  return {
    async watchChainLogs({ network, lastBlock }) {
      const context = Context.current();
      const ctx = deps.contexts.networks().find((c) => c.network === network);
      // Retried, not failed: during a rolling deploy that adds a network, a newer worker serves it.
      if (!ctx) throw ApplicationFailure.retryable(`this worker does not serve ${network}`, 'network_not_served');
      // A network whose node has not answered since this worker started: retried until it does.
      deps.contexts.get({ network });
      const resumed = (context.info.heartbeatDetails as ChainWatchProgress | undefined)?.lastBlock ?? lastBlock;
      let cursor = resumed !== undefined ? BigInt(resumed) : undefined;
      // A first start watches from the head on: that place is heartbeated at once (the SDK sends the
      // first heartbeat unthrottled), so an attempt that dies within seconds leaves it to the next,
      // which would otherwise start from the head of its own time and skip the blocks between.
      if (cursor === undefined) {
        const head = await ctx.publicClient.getBlockNumber({ cacheTime: 0 });
        cursor = head > 0n ? head - 1n : undefined;
      }
      context.log.info(`${network}: watching from ${cursor === undefined ? 'the first block' : `block ${cursor + 1n}`} (attempt ${context.info.attempt})`);
      const beat = () => context.heartbeat({ lastBlock: cursor?.toString() } satisfies ChainWatchProgress);
      beat();
      const watcher = startWatcher({
        client: deps.client,
        network,
        publicClient: ctx.publicClient,
        tokens: deps.contexts.tokensOf(network).map((t) => ({ address: t.tokenAddress, nonceScope: t.nonceScope })),
        ignoreAuthorizers: ctx.merchants,
        isFollowed: (authorizer, nonce) => ctx.followed.has(authorizer, nonce),
        wsUrl: deps.wsUrlOf(network),
        pollIntervalMs: deps.pollIntervalMs,
        cursor: {
          read: () => cursor,
          write: (block) => {
            cursor = block;
          },
        },
        log: (line) => context.log.warn(`${network}: ${line}`),
      });
      const timer = setInterval(beat, HEARTBEAT_EVERY_MS);
      // Handled here too: a slice that ends before any cancellation leaves this promise pending.
      context.cancelled.catch(() => undefined);
      try {
        // Cancelled (its heartbeat timed out, or this worker shuts down): stop, and let the retry go on.
        await Promise.race([watcher.ready.then(() => context.sleep(WATCH_SLICE_MS)), context.cancelled]);
      } finally {
        clearInterval(timer);
        await watcher.stop();
      }
      return { lastBlock: cursor?.toString() };
    },
  };
}
