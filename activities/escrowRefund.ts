// What a refund through the escrow is decided on, read in one look at the pending block: what the
// escrow still lets the operator refund of the hold, the merchant key's balance and its approval of
// the refund collector (the escrow's `refund` pulls what goes back from the operator through it), the
// token's policy, and chain time (the escrow takes refunds until the hold's refundExpiry).
import { paymentInfoHash } from '../domain/escrow.js';
import { escrowAbi } from '../domain/escrowAbi.js';
import { fromWire, tokenAllowanceAbi } from '../domain/escrowCall.js';
import type { EscrowRefundFacts, EscrowRefundFactsRequest } from '../domain/holds.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';

export function createEscrowRefundFactsActivity(ctx: ChainContext) {
  return async function escrowRefundFacts(request: EscrowRefundFactsRequest): Promise<EscrowRefundFacts> {
    if (!ctx.escrow) throw new Error(`${ctx.network} has no escrow configured`);
    const info = fromWire(request.paymentInfo);
    const token = { address: ctx.tokenAddress, abi: tokenAbi } as const;
    const [reads, block] = await Promise.all([
      ctx.publicClient.multicall({
        contracts: [
          { address: ctx.escrow.escrow, abi: escrowAbi, functionName: 'paymentState', args: [paymentInfoHash(info, ctx.chainId, ctx.escrow.escrow)] },
          { ...token, functionName: 'balanceOf', args: [info.operator] },
          { address: ctx.tokenAddress, abi: tokenAllowanceAbi, functionName: 'allowance', args: [info.operator, ctx.escrow.refundCollector] },
          { ...token, functionName: 'paused' },
          { ...token, functionName: 'isBlacklisted', args: [info.operator] },
          { ...token, functionName: 'isBlacklisted', args: [info.payer] },
        ],
        allowFailure: false,
        deployless: true,
        blockTag: 'pending',
      }),
      ctx.publicClient.getBlock({ blockTag: 'pending' }),
    ]);
    const [[, capturable, refundable], merchantBalance, allowance, paused, merchantBlacklisted, payerBlacklisted] = reads;
    return {
      refundableMinor: refundable.toString(),
      capturableMinor: capturable.toString(),
      merchantBalance: merchantBalance.toString(),
      allowance: allowance.toString(),
      paused,
      merchantBlacklisted,
      payerBlacklisted,
      blockNumber: (block.number ?? 0n).toString(),
      blockTimestamp: block.timestamp.toString(),
    };
  };
}
