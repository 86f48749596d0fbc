// The refund floor: what a merchant's own script costs to send money back. Its key (holding the
// token) sends the token's plain `transfer(payer, amount)` and polls every 20 ms for the receipt and
// then for the confirmation depth, exactly as baseline A does for receiveWithAuthorization. No
// signature of the merchant's own to check, no durability, no bookkeeping, no guard against sending
// it twice: the chain's own latency for the cheapest way to move tokens.
import { createPublicClient, createWalletClient, defineChain, type Address, type Hex, type PublicClient } from 'viem';
import { nonceManager, privateKeyToAccount } from 'viem/accounts';
import { RpcMetrics } from '../../activities/rpc/rpcMetrics.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { countingTransport } from './bareCapture.js';

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

const POLL_MS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createTransferBaseline(setup: BareTransferSetup): BareTransferBaseline {
  const metrics = new RpcMetrics();
  const chain = defineChain({
    id: setup.chainId,
    name: 'bench',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [setup.rpcUrl] } },
  });
  const transport = countingTransport(setup.rpcUrl, metrics);
  const account = privateKeyToAccount(setup.senderKey, { nonceManager });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: POLL_MS }) as PublicClient;
  const wallet = createWalletClient({ chain, transport, account });

  async function transfer(to: Address, amountMinor: bigint): Promise<BareTransfer> {
    const started = performance.now();
    const hash = await wallet.writeContract({ address: setup.tokenAddress, abi: tokenAbi, functionName: 'transfer', args: [to, amountMinor] });
    let receipt: Awaited<ReturnType<typeof publicClient.getTransactionReceipt>> | undefined;
    while (!(receipt = await publicClient.getTransactionReceipt({ hash }).catch(() => undefined))) await sleep(POLL_MS);
    if (receipt.status !== 'success') throw new Error(`baseline transfer ${hash} reverted`);
    const includedMs = performance.now() - started;
    while ((await publicClient.getBlockNumber({ cacheTime: 0 })) < receipt.blockNumber + BigInt(setup.confirmations)) await sleep(POLL_MS);
    return { transactionHash: hash, includedMs, settledMs: performance.now() - started, gasUsed: receipt.gasUsed };
  }

  return { address: account.address, transfer, rpcCalls: () => metrics.snapshot().byMethod };
}
