import type { CaptureRequest } from '../domain/activityContract.js';
import type { CapturePrecheckFacts } from '../domain/facts.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';

/** Generous gas for one receive/transferWithAuthorization (a fresh nonce slot and two balances). */
export const CAPTURE_GAS_LIMIT = 150_000n;
const PRIORITY_FEE_ALLOWANCE = 2_000_000_000n;

export function createPrecheckActivity(ctx: ChainContext) {
  /** Reads the `pending` (preconfirmed) view, the freshest state a capture will meet. */
  return async function precheckCapture(request: CaptureRequest): Promise<CapturePrecheckFacts> {
    const { from, nonce } = request.authorization;
    const read = { address: ctx.tokenAddress, abi: tokenAbi, blockTag: 'pending' } as const;
    const [authorizationUsed, payerBalance, paused, payerBlacklisted, merchantBlacklisted, block, merchantGasBalance] =
      await Promise.all([
        ctx.publicClient.readContract({ ...read, functionName: 'authorizationState', args: [from, nonce] }),
        ctx.publicClient.readContract({ ...read, functionName: 'balanceOf', args: [from] }),
        ctx.publicClient.readContract({ ...read, functionName: 'paused' }),
        ctx.publicClient.readContract({ ...read, functionName: 'isBlacklisted', args: [from] }),
        ctx.publicClient.readContract({ ...read, functionName: 'isBlacklisted', args: [ctx.merchant] }),
        ctx.publicClient.getBlock({ blockTag: 'pending' }),
        ctx.publicClient.getBalance({ address: ctx.merchant, blockTag: 'pending' }),
      ]);
    // Priced from the pending block already read (twice its base fee plus a tip, as wallets do)
    // rather than a separate fee estimate: two fewer calls per capture.
    const maxFeePerGas = (block.baseFeePerGas ?? 0n) * 2n + PRIORITY_FEE_ALLOWANCE;
    return {
      chainTime: block.timestamp.toString(),
      authorizationUsed,
      payerBalance: payerBalance.toString(),
      merchantGasBalance: merchantGasBalance.toString(),
      requiredGas: (CAPTURE_GAS_LIMIT * maxFeePerGas).toString(),
      paused,
      payerBlacklisted,
      merchantBlacklisted,
    };
  };
}
