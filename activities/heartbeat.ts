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

/** Waits until `blockNumber` has `confirmations` blocks on top of it, counting itself. */
export async function waitForDepth(ctx: ChainContext, blockNumber: bigint): Promise<void> {
  const target = blockNumber + BigInt(Math.max(ctx.confirmations, 1) - 1);
  for (;;) {
    if ((await ctx.publicClient.getBlockNumber({ cacheTime: 0 })) >= target) return;
    heartbeat();
    await sleep(ctx.pollingIntervalMs);
  }
}
