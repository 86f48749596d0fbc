// An injected EIP-1193 wallet for the browser tests. The page sees `window.ethereum` (request, on,
// removeListener); every request goes to Node through an exposed binding, where this class answers
// as a wallet would: the configured account and chain, a chain switch that emits chainChanged, and
// eth_signTypedData_v4 forwarded to anvil (its dev accounts are unlocked, so anvil signs as the
// payer's wallet would) — or refused with 4001 as a payer declining.
import type { Page } from 'playwright-core';

export interface WalletCall {
  method: string;
  params: unknown[];
}

type Answer = { result: unknown; events?: [string, unknown][] } | { error: { code: number; message: string } };

export class TestWallet {
  readonly calls: WalletCall[] = [];
  /** Refuse the next signature request as the user would (EIP-1193 4001). */
  rejectSigning = false;
  private signingGate: Promise<void> | undefined;
  private page: Page | undefined;

  constructor(
    private readonly rpcUrl: string,
    public account: string,
    public chainId: number,
  ) {}

  /** Installs window.ethereum on every page load of `page`. */
  async install(page: Page): Promise<void> {
    this.page = page;
    await page.exposeFunction('__authcapWallet', (call: WalletCall) => this.handle(call));
    await page.addInitScript(() => {
      const w = globalThis as any;
      const listeners = new Map<string, Set<(value: unknown) => void>>();
      const emit = (event: string, value: unknown) =>
        listeners.get(event)?.forEach((listener) => {
          listener(value);
        });
      w.__authcapEmit = emit;
      w.ethereum = {
        async request({ method, params }: { method: string; params?: unknown[] }) {
          const answer = await w.__authcapWallet({ method, params: params ?? [] });
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

  /** Holds signature requests until the returned function is called (to see the "signing" state). */
  holdSigning(): () => void {
    let release!: () => void;
    this.signingGate = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.signingGate = undefined;
      release();
    };
  }

  /** The payer switches account in the wallet: the page hears accountsChanged. */
  async switchAccount(account: string): Promise<void> {
    this.account = account;
    await this.page!.evaluate((a) => (globalThis as any).__authcapEmit('accountsChanged', [a]), account);
  }

  signatureRequests(): WalletCall[] {
    return this.calls.filter((c) => c.method === 'eth_signTypedData_v4');
  }

  private async handle(call: WalletCall): Promise<Answer> {
    this.calls.push(call);
    switch (call.method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return { result: [this.account] };
      case 'eth_chainId':
        return { result: `0x${this.chainId.toString(16)}` };
      case 'wallet_switchEthereumChain': {
        const wanted = Number.parseInt(String((call.params[0] as { chainId?: string })?.chainId), 16);
        this.chainId = wanted;
        return { result: null, events: [['chainChanged', `0x${wanted.toString(16)}`]] };
      }
      case 'eth_signTypedData_v4': {
        await this.signingGate;
        if (this.rejectSigning) {
          this.rejectSigning = false;
          return { error: { code: 4001, message: 'User rejected the request.' } };
        }
        const [account, data] = call.params as [string, string];
        // A wallet signs only with its own account: the page must have asked for the payer's.
        if (account.toLowerCase() !== this.account.toLowerCase()) return { error: { code: 4100, message: 'The requested account has not been authorized.' } };
        return this.rpc('eth_signTypedData_v4', [account, JSON.parse(data)]);
      }
      default:
        return { error: { code: 4200, message: `${call.method} is not supported by this test wallet` } };
    }
  }

  private async rpc(method: string, params: unknown[]): Promise<Answer> {
    const res = await fetch(this.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const answer = (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
    return answer.error ? { error: answer.error } : { result: answer.result };
  }
}
