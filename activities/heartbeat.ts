// Heartbeats that also work outside an activity (unit tests call the functions directly).
import { Context } from '@temporalio/activity';
import type { Hex, TransactionReceipt } from 'viem';
import type { ChainContext } from './chainContext.js';

/** What each running attempt last heartbeat with: Temporal keeps only the latest heartbeat's details. */
const lastDetails = new WeakMap<Context, { details: unknown }>();

/**
 * Tells Temporal the activity is alive. Without `details`, the attempt's last details go again (or those
 * it started with): a bare heartbeat from a wait must not erase the progress a retry resumes from.
 */
export function heartbeat(details?: unknown): void {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return; // not inside an activity
  }
  if (details !== undefined) lastDetails.set(context, { details });
  context.heartbeat(details !== undefined ? details : lastDetails.has(context) ? lastDetails.get(context)!.details : context.info.heartbeatDetails);
}

export function lastHeartbeat<T>(): T | undefined {
  try {
    return Context.current().info.heartbeatDetails as T | undefined;
  } catch {
    return undefined;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Until the next block is announced (or, without announcements, the polling interval has passed):
 * the moment a wait's answer can have changed. Heartbeats so Temporal knows the wait is alive.
 */
export async function untilNextBlock(ctx: ChainContext, seen: bigint | undefined): Promise<bigint | undefined> {
  heartbeat();
  // Nothing announced yet when the caller last looked: the first announcement (or the interval) will do.
  if (seen === undefined) return ctx.heads.nextHead(-1n, ctx.pollingIntervalMs);
  return ctx.heads.nextHead(seen, ctx.heads.fallbackMs(ctx.pollingIntervalMs));
}

/** Reads the receipt once per new block, heartbeating so Temporal knows the wait is alive (and can cancel it). */
export async function waitForReceipt(ctx: ChainContext, hash: Hex): Promise<TransactionReceipt> {
  for (;;) {
    // The head before the read: a block announced while the read was on its way wakes us at once.
    const seen = ctx.heads.head;
    const receipt = await ctx.publicClient.getTransactionReceipt({ hash }).catch((err: Error) => {
      if (err.name === 'TransactionReceiptNotFoundError') return undefined;
      throw err;
    });
    if (receipt) return receipt;
    await untilNextBlock(ctx, seen);
  }
}

/**
 * Waits until `blockNumber` is final by the configured rule: that many blocks built on top of it,
 * or the node's `safe` / `finalized` tag at or past it.
 */
export async function waitForDepth(ctx: ChainContext, blockNumber: bigint): Promise<void> {
  for (;;) {
    if (typeof ctx.confirmations === 'number') {
      const target = blockNumber + BigInt(ctx.confirmations);
      let head: bigint | undefined = await ctx.publicClient.getBlockNumber({ cacheTime: 0 });
      // Announced blocks count without another read; a silent feed sends us back to the node.
      while (head !== undefined && head < target) head = await untilNextBlock(ctx, head);
      if (head !== undefined) return;
      continue;
    } else {
      const final = await ctx.publicClient.getBlock({ blockTag: ctx.confirmations }).catch(() => undefined);
      if (final?.number !== undefined && final.number !== null && final.number >= blockNumber) return;
    }
    heartbeat();
    await sleep(ctx.pollingIntervalMs);
  }
}
