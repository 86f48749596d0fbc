// An injected EIP-1193 wallet that knows several chains, for the two-network checkout tests. Like
// support/wallet.ts's TestWallet (requests go to Node through an exposed binding; anvil's unlocked
// accounts sign), plus what a multi-chain wallet does: it knows some chains and answers 4902 for
// others until wallet_addEthereumChain adds them, signs only typed data of its current chain (as
// MetaMask does), and can move to another chain without telling the page (`drift`).
import type { Page } from 'playwright-core';
import type { WalletCall } from './wallet.js';

type Answer = { result: unknown; events?: [string, unknown][] } | { error: { code: number; message: string } };

export interface ChainsWalletOptions {
  account: string;
  /** The chain it starts on. */
  chainId: number;
  /** The anvil of each chain it can sign on (anvil's dev accounts are unlocked on every one). */
  nodes: Record<number, string>;
  /** The chains it knows at the start (default: every chain in `nodes`). */
  known?: number[];
}

const hex = (chainId: number) => `0x${chainId.toString(16)}`;

export class ChainsWallet {
  readonly calls: WalletCall[] = [];
  chainId: number;
  private readonly known: Set<number>;

  constructor(private readonly options: ChainsWalletOptions) {
    this.chainId = options.chainId;
    this.known = new Set(options.known ?? Object.keys(options.nodes).map(Number));
  }

  /** Installs window.ethereum on every page load of `page`. */
  async install(page: Page): Promise<void> {
    await page.exposeFunction('__authcapChainsWallet', (call: WalletCall) => this.handle(call));
    await page.addInitScript(() => {
      const w = globalThis as any;
      const listeners = new Map<string, Set<(value: unknown) => void>>();
      const emit = (event: string, value: unknown) =>
        listeners.get(event)?.forEach((listener) => {
          listener(value);
        });
      w.ethereum = {
        async request({ method, params }: { method: string; params?: unknown[] }) {
          const answer = await w.__authcapChainsWallet({ method, params: params ?? [] });
          if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
          for (const [event, value] of answer.events ?? []) emit(event, value);
          return answer.result;
        },
        on(event: string, listener: (value: unknown) => void) {
          if (!listeners.has(event)) listeners.set(event, new Set());
          listeners.get(event)!.add(listener);
        },
        removeListener(event: string, listener: (value: unknown) => void) {
          listeners.get(event)?.delete(listener);
        },
      };
    });
  }

  /** The wallet moves to another chain and, like some wallets, never emits chainChanged. */
  drift(chainId: number): void {
    this.chainId = chainId;
  }

  requests(method: string): WalletCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  private async handle(call: WalletCall): Promise<Answer> {
    this.calls.push(call);
    switch (call.method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return { result: [this.options.account] };
      case 'eth_chainId':
        return { result: hex(this.chainId) };
      case 'wallet_switchEthereumChain':
        return this.switchTo(Number.parseInt(String((call.params[0] as { chainId?: string })?.chainId), 16));
      case 'wallet_addEthereumChain':
        return this.add(call.params[0] as { chainId?: string; rpcUrls?: string[] });
      case 'eth_signTypedData_v4':
        return this.sign(call.params as [string, string]);
      default:
        return { error: { code: 4200, message: `${call.method} is not supported by this test wallet` } };
    }
  }

  private switchTo(chainId: number): Answer {
    if (!this.known.has(chainId))
      return { error: { code: 4902, message: `Unrecognized chain ID "${hex(chainId)}". Try adding the chain using wallet_addEthereumChain first.` } };
    this.chainId = chainId;
    return { result: null, events: [['chainChanged', hex(chainId)]] };
  }

  /** Adds the chain, as a wallet does once the payer approves; it does not switch (the page must). */
  private add(params: { chainId?: string; rpcUrls?: string[] } | undefined): Answer {
    const chainId = Number.parseInt(String(params?.chainId), 16);
    if (!Number.isSafeInteger(chainId) || !params?.rpcUrls?.length) return { error: { code: -32602, message: 'invalid wallet_addEthereumChain parameters' } };
    this.known.add(chainId);
    return { result: null };
  }

  private async sign([account, data]: [string, string]): Promise<Answer> {
    if (account.toLowerCase() !== this.options.account.toLowerCase())
      return { error: { code: 4100, message: 'The requested account has not been authorized.' } };
    const typedData = JSON.parse(data) as { domain?: { chainId?: number } };
    if (Number(typedData.domain?.chainId) !== this.chainId)
      return { error: { code: -32602, message: `Provided chainId "${typedData.domain?.chainId}" must match the active chainId "${this.chainId}"` } };
    const node = this.options.nodes[this.chainId];
    if (!node) return { error: { code: -32603, message: `no node for chain ${this.chainId}` } };
    const res = await fetch(node, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_signTypedData_v4', params: [account, typedData] }),
    });
    const answer = (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
    return answer.error ? { error: answer.error } : { result: answer.result };
  }
}
