// Baseline A, the floor: what a merchant's own script costs. It signs a ReceiveWithAuthorization for
// a payer, sends `receiveWithAuthorization` from its own key (the same `v, r, s` overload authcap
// uses), and polls every 20 ms for the receipt and then for the confirmation depth. No durability,
// no checks, no bookkeeping: the chain's own latency plus one signature.
import { randomBytes } from 'node:crypto';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  toHex,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
} from 'viem';
import { nonceManager, privateKeyToAccount } from 'viem/accounts';
import { authorizationTypes, type TokenDomain } from '../../../domain/eip3009.js';
import { splitEcdsa } from '../../../domain/signature.js';
import { tokenAbi } from '../../../domain/tokenAbi.js';
import { RpcMetrics, instrumentedHttp } from '../../../activities/rpc/rpcMetrics.js';

export interface BareSetup {
  rpcUrl: string;
  chainId: number;
  tokenAddress: Address;
  domain: TokenDomain;
  /** The submitter's key: it receives the payments and pays the gas (already funded). */
  submitterKey: Hex;
  /** Confirmations on top of the capture's block, as authcap is configured (1 by default). */
  confirmations: number;
}

export interface BareCapture {
  transactionHash: Hex;
  /** From the start of the request to the receipt (the log is in a block). */
  preconfirmedMs: number;
  /** From the start of the request to the confirmation depth. */
  capturedMs: number;
}

export interface BareBaseline {
  capture(payer: { address: Address; privateKey: Hex }, amountMinor: bigint): Promise<BareCapture>;
  rpcCalls(): Record<string, number>;
}

/** The worker's own counting transport, unbatched: each call of a baseline is one round trip. */
export function countingTransport(rpcUrl: string, metrics: RpcMetrics): Transport {
  return instrumentedHttp(rpcUrl, metrics, { batch: false });
}

const POLL_MS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A baseline's clients: one key sending, every call counted, polling every 20 ms. */
export function baselineClients(rpcUrl: string, chainId: number, key: Hex) {
  const metrics = new RpcMetrics();
  const chain = defineChain({
    id: chainId,
    name: 'bench',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = countingTransport(rpcUrl, metrics);
  const account = privateKeyToAccount(key, { nonceManager });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: POLL_MS }) as PublicClient;
  const wallet = createWalletClient({ chain, transport, account });
  return { metrics, account, publicClient, wallet };
}

/**
 * Polls for the transaction's receipt, then for the confirmation depth; `onIncluded` is told when
 * the receipt came. Throws if it reverted.
 */
export async function untilSettled(publicClient: PublicClient, hash: Hex, confirmations: number, onIncluded: () => void): Promise<TransactionReceipt> {
  let receipt: TransactionReceipt | undefined;
  while (!(receipt = await publicClient.getTransactionReceipt({ hash }).catch(() => undefined))) await sleep(POLL_MS);
  if (receipt.status !== 'success') throw new Error(`baseline transaction ${hash} reverted`);
  onIncluded();
  while ((await publicClient.getBlockNumber({ cacheTime: 0 })) < receipt.blockNumber + BigInt(confirmations)) await sleep(POLL_MS);
  return receipt;
}

export function createBareBaseline(setup: BareSetup): BareBaseline {
  const { metrics, account, publicClient, wallet } = baselineClients(setup.rpcUrl, setup.chainId, setup.submitterKey);

  async function capture(payer: { address: Address; privateKey: Hex }, amountMinor: bigint): Promise<BareCapture> {
    const started = performance.now();
    const now = BigInt(Math.floor(Date.now() / 1000));
    const message = {
      from: payer.address,
      to: account.address,
      value: amountMinor,
      validAfter: now - 60n,
      validBefore: now + 600n,
      nonce: toHex(randomBytes(32)),
    };
    const signature = await privateKeyToAccount(payer.privateKey).signTypedData({
      domain: setup.domain,
      types: { ReceiveWithAuthorization: authorizationTypes.ReceiveWithAuthorization },
      primaryType: 'ReceiveWithAuthorization',
      message,
    });
    const { v, r, s } = splitEcdsa(signature)!;
    const hash = await wallet.writeContract({
      address: setup.tokenAddress,
      abi: tokenAbi,
      functionName: 'receiveWithAuthorization',
      args: [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, v, r, s],
    });
    let preconfirmedMs = 0;
    await untilSettled(publicClient, hash, setup.confirmations, () => (preconfirmedMs = performance.now() - started));
    return { transactionHash: hash, preconfirmedMs, capturedMs: performance.now() - started };
  }

  return { capture, rpcCalls: () => metrics.snapshot().byMethod };
}
