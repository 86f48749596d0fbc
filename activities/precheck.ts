import type { CaptureRequest } from '../domain/activityContract.js';
import type { CapturePrecheckFacts } from '../domain/facts.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import { captureGasCost } from '../runtime/chain/captureGas.js';
import type { ChainContext } from './chainContext.js';

export function createPrecheckActivity(ctx: ChainContext) {
  /** Reads the `pending` (preconfirmed) view, the freshest state a capture will meet. */
  return async function precheckCapture(request: CaptureRequest): Promise<CapturePrecheckFacts> {
    const { from, nonce } = request.authorization;
    // The payee is the key that will send the capture (receiveWithAuthorization requires it).
    const merchant = ctx.senderFor(request.authorization.to);
    const token = { address: ctx.tokenAddress, abi: tokenAbi } as const;
    // The five token reads travel as one eth_call (a deployless multicall: no Multicall3 needs to be
    // deployed), beside the pending block and the merchant's gas balance: three node calls, one view.
    const [reads, block, merchantGasBalance] = await Promise.all([
      ctx.publicClient.multicall({
        contracts: [
          { ...token, functionName: 'authorizationState', args: [from, nonce] },
          { ...token, functionName: 'balanceOf', args: [from] },
          { ...token, functionName: 'paused' },
          { ...token, functionName: 'isBlacklisted', args: [from] },
          { ...token, functionName: 'isBlacklisted', args: [merchant] },
        ],
        allowFailure: false,
        deployless: true,
        blockTag: 'pending',
      }),
      ctx.publicClient.getBlock({ blockTag: 'pending' }),
      ctx.publicClient.getBalance({ address: merchant, blockTag: 'pending' }),
    ]);
    const [authorizationUsed, payerBalance, paused, payerBlacklisted, merchantBlacklisted] = reads;
    // Priced from the pending block already read (twice its base fee plus a tip, as wallets do)
    // rather than a separate fee estimate: two fewer calls per capture.
    return {
      chainTime: block.timestamp.toString(),
      authorizationUsed,
      payerBalance: payerBalance.toString(),
      merchantGasBalance: merchantGasBalance.toString(),
      requiredGas: captureGasCost(block.baseFeePerGas).toString(),
      paused,
      payerBlacklisted,
      merchantBlacklisted,
    };
  };
}
