// The refund floor: what a merchant's own script costs to send money back. Its key (holding the
// token) sends the token's plain `transfer(payer, amount)` and polls every 20 ms for the receipt and
// then for the confirmation depth, exactly as baseline A does for receiveWithAuthorization. No
// signature of the merchant's own to check, no durability, no bookkeeping, no guard against sending
// it twice: the chain's own latency for the cheapest way to move tokens.
import type { Address, Hex } from 'viem';
import { tokenAbi } from '../../../domain/tokenAbi.js';
import { baselineClients, untilSettled } from './bareCapture.js';

export interface BareTransferSetup {
  rpcUrl: string;
  chainId: number;
  tokenAddress: Address;
  /** The sender's key: it holds the token and pays the gas (already funded with both). */
  senderKey: Hex;
  /** Confirmations on top of the transfer's block, as authcap is configured (1 by default). */
  confirmations: number;
}

export interface BareTransfer {
  transactionHash: Hex;
  /** From the start of the request to the receipt (the Transfer log is in a block). */
  includedMs: number;
  /** From the start of the request to the confirmation depth. */
  settledMs: number;
  gasUsed: bigint;
}

export interface BareTransferBaseline {
  address: Address;
  transfer(to: Address, amountMinor: bigint): Promise<BareTransfer>;
  rpcCalls(): Record<string, number>;
}

export function createTransferBaseline(setup: BareTransferSetup): BareTransferBaseline {
  const { metrics, account, publicClient, wallet } = baselineClients(setup.rpcUrl, setup.chainId, setup.senderKey);

  async function transfer(to: Address, amountMinor: bigint): Promise<BareTransfer> {
    const started = performance.now();
    const hash = await wallet.writeContract({ address: setup.tokenAddress, abi: tokenAbi, functionName: 'transfer', args: [to, amountMinor] });
    let includedMs = 0;
    const receipt = await untilSettled(publicClient, hash, setup.confirmations, () => (includedMs = performance.now() - started));
    return { transactionHash: hash, includedMs, settledMs: performance.now() - started, gasUsed: receipt.gasUsed };
  }

  return { address: account.address, transfer, rpcCalls: () => metrics.snapshot().byMethod };
}
