// When a settle's transfer is in a block. An x402 server expects the settle's answer then, as x402's
// own facilitator gives it (at the receipt), while authcap's record of the capture follows it to the
// network's confirmation depth. One watch per network for every settle under way in this API process:
// the head polled, and each new block's AuthorizationUsed logs of the watched (payer, nonce) pairs
// read in one eth_getLogs; a log's transaction counts only if, right after it, the token moved this
// payment's amount from the payer to its recipient (this very authorization, not another one of the
// payer's under the same nonce).
import { createPublicClient, http, type Address, type Hash, type Hex, type PublicClient } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { paidIn } from './paymentProof.js';
import { createLogger } from '../../runtime/logger.js';
import type { X402Payment } from './payment.js';

const logger = createLogger('authcap-x402');

/** How often the head is asked while a settle waits: a tenth of a 0.2 s block, a fiftieth of Base's 2 s. */
const POLL_MS = 40;

interface Watched {
  payment: X402Payment;
  resolve: (hash: Hash | undefined) => void;
  timer: NodeJS.Timeout;
}

interface ChainWatch {
  client: PublicClient;
  /** By `<payer>:<nonce>`, lower case. */
  watched: Map<string, Watched>;
  /** The last block whose logs were read. */
  lastBlock?: bigint;
  running: boolean;
}

const keyOf = (payer: string, nonce: string) => `${payer.toLowerCase()}:${nonce.toLowerCase()}`;

export class LandingWatch {
  private readonly chains = new Map<number, ChainWatch>();

  constructor(private readonly rpcUrlOf: (chainId: number) => string | undefined) {}

  /**
   * Resolves `landed` with the transaction that paid this payment once it is in a block, or with
   * undefined at `untilMs`, on `stop()`, when another transfer used the nonce, or without a node.
   * Start it before the transfer can be sent: only blocks from now on are read.
   */
  watch(payment: X402Payment, untilMs: number): { landed: Promise<Hash | undefined>; stop(): void } {
    const chain = this.chainOf(payment.chainId);
    if (!chain) return { landed: Promise.resolve(undefined), stop: () => undefined };
    const key = keyOf(payment.authorization.from, payment.authorization.nonce);
    let finish: (hash: Hash | undefined) => void = () => undefined;
    const landed = new Promise<Hash | undefined>((resolve) => {
      const entry: Watched = {
        payment,
        resolve: (hash) => {
          clearTimeout(entry.timer);
          if (chain.watched.get(key) === entry) chain.watched.delete(key);
          resolve(hash);
        },
        timer: setTimeout(() => entry.resolve(undefined), Math.max(0, untilMs - Date.now())),
      };
      finish = entry.resolve;
      // Two settles of one payment in this process: each has its answer from its own command too.
      chain.watched.get(key)?.resolve(undefined);
      chain.watched.set(key, entry);
      if (!chain.running) void this.run(chain);
    });
    return { landed, stop: () => finish(undefined) };
  }

  private chainOf(chainId: number): ChainWatch | undefined {
    let chain = this.chains.get(chainId);
    if (!chain) {
      const url = this.rpcUrlOf(chainId);
      if (!url) return undefined;
      chain = { client: createPublicClient({ transport: http(url, { timeout: 5_000, retryCount: 1 }) }), watched: new Map(), running: false };
      this.chains.set(chainId, chain);
    }
    return chain;
  }

  private async run(chain: ChainWatch): Promise<void> {
    chain.running = true;
    try {
      while (chain.watched.size > 0) {
        try {
          await this.readNewBlocks(chain);
        } catch (err) {
          // The node did not answer: the settle's own wait (the capture command) still ends it.
          logger.debug({ err }, 'the x402 landing watch could not read the node; trying again');
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    } finally {
      chain.running = false;
      chain.lastBlock = undefined;
    }
  }

  private async readNewBlocks(chain: ChainWatch): Promise<void> {
    const head = await chain.client.getBlockNumber({ cacheTime: 0 });
    if (chain.lastBlock === undefined) {
      // The transfers watched are sent after they were registered: the blocks from the head on.
      chain.lastBlock = head - 1n;
    }
    if (head <= chain.lastBlock) return;
    const entries = [...chain.watched.values()];
    const tokens = [...new Set(entries.map((e) => e.payment.token.address.toLowerCase() as Address))];
    const logs = await chain.client.getContractEvents({
      address: tokens,
      abi: tokenAbi,
      eventName: 'AuthorizationUsed',
      args: {
        authorizer: [...new Set(entries.map((e) => e.payment.authorization.from))],
        nonce: [...new Set(entries.map((e) => e.payment.authorization.nonce.toLowerCase() as Hex))],
      },
      fromBlock: chain.lastBlock + 1n,
      toBlock: head,
    });
    for (const log of logs) {
      if (log.removed || !log.transactionHash) continue;
      const key = keyOf(log.args.authorizer ?? '', log.args.nonce ?? '');
      const entry = chain.watched.get(key);
      if (!entry || log.address.toLowerCase() !== entry.payment.token.address.toLowerCase()) continue;
      entry.resolve((await paidIn(chain.client, entry.payment, log.transactionHash, log.logIndex ?? -2)) ? log.transactionHash : undefined);
    }
    // Only once every log of these blocks was judged: a receipt the node did not give is read again.
    chain.lastBlock = head;
  }
}
