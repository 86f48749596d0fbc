// One merchant key submits for many workflows: transaction nonces are handed out one at a time so
// that concurrent captures in this process never collide. The next nonce is the larger of the node's
// `pending` count (which includes preconfirmed and pooled transactions) and the last one we used.
import { keccak256, type Account, type Address, type Chain, type Hex, type PublicClient, type Transport, type WalletClient } from 'viem';

export interface SignedTransaction {
  hash: Hex;
  raw: Hex;
  nonce: number;
}

export class MerchantRelayer {
  private queue: Promise<unknown> = Promise.resolve();
  private nextNonce: number | undefined;

  constructor(
    private readonly publicClient: PublicClient<Transport, Chain>,
    private readonly walletClient: WalletClient<Transport, Chain, Account>,
  ) {}

  get address(): Address {
    return this.walletClient.account.address;
  }

  /**
   * Signs and broadcasts one transaction. `beforeBroadcast` sees the signed transaction first, so the
   * caller can record its hash durably before it can possibly be mined.
   */
  send(
    request: { to: Address; data: Hex; gas: bigint },
    beforeBroadcast: (tx: SignedTransaction) => void | Promise<void>,
  ): Promise<SignedTransaction> {
    const run = this.queue.then(() => this.signAndSend(request, beforeBroadcast));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async signAndSend(
    request: { to: Address; data: Hex; gas: bigint },
    beforeBroadcast: (tx: SignedTransaction) => void | Promise<void>,
  ): Promise<SignedTransaction> {
    const pendingCount = await this.publicClient.getTransactionCount({ address: this.address, blockTag: 'pending' });
    const nonce = Math.max(pendingCount, this.nextNonce ?? 0);
    const fees = await this.publicClient.estimateFeesPerGas();
    const raw = await this.walletClient.signTransaction({
      to: request.to,
      data: request.data,
      gas: request.gas,
      nonce,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      chain: this.walletClient.chain,
      account: this.walletClient.account,
    });
    const signed = { hash: keccak256(raw), raw, nonce };
    await beforeBroadcast(signed);
    try {
      await this.publicClient.sendRawTransaction({ serializedTransaction: raw });
    } catch (err) {
      // The node forgetting our local count (restart) shows up as "nonce too low": start over from it.
      this.nextNonce = undefined;
      throw err;
    }
    this.nextNonce = nonce + 1;
    return signed;
  }
}
