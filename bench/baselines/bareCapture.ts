// Baseline A, the floor: what a merchant's own script costs. It signs a ReceiveWithAuthorization for
// a payer, sends `receiveWithAuthorization` from its own key (the same `v, r, s` overload authcap
// uses), and polls every 20 ms for the receipt and then for the confirmation depth. No durability,
// no checks, no bookkeeping: the chain's own latency plus one signature.
import { randomBytes } from 'node:crypto';
import {
  createPublicClient, createWalletClient, custom, defineChain, http, toHex,
  type Address, type Hex, type PublicClient, type Transport,
} from 'viem';
import { nonceManager, privateKeyToAccount } from 'viem/accounts';
import { authorizationTypes, type TokenDomain } from '../../domain/eip3009.js';
import { splitEcdsa } from '../../domain/signature.js';
import { tokenAbi } from '../../domain/tokenAbi.js';

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

/** viem's http transport with a per-method counter (no batching: each call is one round trip). */
export function countingTransport(rpcUrl: string, counts: Record<string, number>): Transport {
  const inner = http(rpcUrl);
  return (params) => {
    const transport = inner(params);
    return custom({
      request: (args: { method: string; params?: unknown }) => {
        counts[args.method] = (counts[args.method] ?? 0) + 1;
        return transport.request(args as never);
      },
    })(params);
  };
}

const POLL_MS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createBareBaseline(setup: BareSetup): BareBaseline {
  const counts: Record<string, number> = {};
  const chain = defineChain({ id: setup.chainId, name: 'bench', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [setup.rpcUrl] } } });
  const transport = countingTransport(setup.rpcUrl, counts);
  const account = privateKeyToAccount(setup.submitterKey, { nonceManager });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: POLL_MS }) as PublicClient;
  const wallet = createWalletClient({ chain, transport, account });

  async function capture(payer: { address: Address; privateKey: Hex }, amountMinor: bigint): Promise<BareCapture> {
    const started = performance.now();
    const now = BigInt(Math.floor(Date.now() / 1000));
    const message = { from: payer.address, to: account.address, value: amountMinor, validAfter: now - 60n, validBefore: now + 600n, nonce: toHex(randomBytes(32)) };
    const signature = await privateKeyToAccount(payer.privateKey).signTypedData({
      domain: setup.domain, types: { ReceiveWithAuthorization: authorizationTypes.ReceiveWithAuthorization }, primaryType: 'ReceiveWithAuthorization', message,
    });
    const { v, r, s } = splitEcdsa(signature)!;
    const hash = await wallet.writeContract({
      address: setup.tokenAddress, abi: tokenAbi, functionName: 'receiveWithAuthorization',
      args: [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, v, r, s],
    });
    let receipt;
    while (!(receipt = await publicClient.getTransactionReceipt({ hash }).catch(() => undefined))) await sleep(POLL_MS);
    if (receipt.status !== 'success') throw new Error(`baseline capture ${hash} reverted`);
    const preconfirmedMs = performance.now() - started;
    while ((await publicClient.getBlockNumber({ cacheTime: 0 })) < receipt.blockNumber + BigInt(setup.confirmations)) await sleep(POLL_MS);
    return { transactionHash: hash, preconfirmedMs, capturedMs: performance.now() - started };
  }

  return { capture, rpcCalls: () => ({ ...counts }) };
}
