// Heartbeats that also work outside an activity (unit tests call the functions directly).
import { Context } from '@temporalio/activity';
import type { Hex, TransactionReceipt } from 'viem';
import type { ChainContext } from './chainContext.js';

export function heartbeat(details?: unknown): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    // not inside an activity
  }
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

/** Polls for a receipt, heartbeating so Temporal knows the wait is alive (and can cancel it). */
export async function waitForReceipt(ctx: ChainContext, hash: Hex): Promise<TransactionReceipt> {
  for (;;) {
    const receipt = await ctx.publicClient.getTransactionReceipt({ hash }).catch((err: Error) => {
      if (err.name === 'TransactionReceiptNotFoundError') return undefined;
      throw err;
    });
    if (receipt) return receipt;
    heartbeat();
    await sleep(ctx.pollingIntervalMs);
  }
}

/**
 * Waits until `blockNumber` is final by the configured rule: that many blocks built on top of it,
 * or the node's `safe` / `finalized` tag at or past it.
 */
export async function waitForDepth(ctx: ChainContext, blockNumber: bigint): Promise<void> {
  for (;;) {
    if (typeof ctx.confirmations === 'number') {
      if ((await ctx.publicClient.getBlockNumber({ cacheTime: 0 })) >= blockNumber + BigInt(ctx.confirmations)) return;
    } else {
      const final = await ctx.publicClient.getBlock({ blockTag: ctx.confirmations }).catch(() => undefined);
      if (final?.number !== undefined && final.number !== null && final.number >= blockNumber) return;
    }
    heartbeat();
    await sleep(ctx.pollingIntervalMs);
  }
}
