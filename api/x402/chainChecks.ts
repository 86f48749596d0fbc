// What only the chain can say of an x402 payment, read by the API without starting anything: whether
// the signature is the payer's (locally for a key, `isValidSignature` for a contract wallet), whether
// the payer holds the amount and the nonce is unused in the `pending` view, and, for a payload whose
// nonce someone already used, which transaction paid it. One node client per network, kept.
import { createPublicClient, http, type Hash, type PublicClient } from 'viem';
import { AuthcapError } from '../../domain/errors.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { paidIn } from './paymentProof.js';
import { SignatureChecker } from '../../client/authorizations/signatureCheck.js';
import { X402Refusal } from './reasons.js';
import type { X402Payment } from './payment.js';

/** How far back a payload's own transfer is looked for: past the longest window x402 signs, on a 0.2 s chain. */
const MAX_LOOKBACK_BLOCKS = 50_000n;

interface NetworkReader {
  client: PublicClient;
  signatures: SignatureChecker;
}

export class X402ChainChecks {
  private readonly readers = new Map<number, NetworkReader>();

  /** @param rpcUrlOf the node of a chain id (the deployment's first for that network). */
  constructor(private readonly rpcUrlOf: (chainId: number) => string | undefined) {}

  private reader(chainId: number): NetworkReader {
    let reader = this.readers.get(chainId);
    if (!reader) {
      const url = this.rpcUrlOf(chainId);
      if (!url) throw new AuthcapError('chain_unavailable', `no node is configured for chain ${chainId}`);
      reader = { client: createPublicClient({ transport: http(url, { timeout: 5_000, retryCount: 1 }) }), signatures: new SignatureChecker(url) };
      this.readers.set(chainId, reader);
    }
    return reader;
  }

  /** Throws the X402Refusal that says why the payment cannot be paid now, or the node's outage (chain_unavailable). */
  async assertPayable(payment: X402Payment): Promise<void> {
    const { client, signatures } = this.reader(payment.chainId);
    const { from, nonce, value } = payment.authorization;
    try {
      await signatures.check(
        'signature',
        { domain: payment.domain, primaryType: payment.primaryType, authorization: payment.authorization },
        payment.signature,
      );
    } catch (err) {
      if (err instanceof AuthcapError && err.code === 'invalid_signature') throw new X402Refusal('invalid_exact_evm_payload_signature', err.message);
      throw err;
    }
    const [used, balance] = await this.read(() =>
      Promise.all([
        client.readContract({ address: payment.token.address, abi: tokenAbi, functionName: 'authorizationState', args: [from, nonce], blockTag: 'pending' }),
        client.readContract({ address: payment.token.address, abi: tokenAbi, functionName: 'balanceOf', args: [from], blockTag: 'pending' }),
      ]),
    );
    if (used) throw new X402Refusal('invalid_exact_evm_nonce_already_used', `the nonce ${nonce} of ${from} is already used or canceled`);
    if (balance < BigInt(value)) throw new X402Refusal('insufficient_funds', `${from} holds ${balance} of the ${value} asked`);
  }

  /**
   * The mined transaction in which this very authorization paid (its AuthorizationUsed, and right
   * after it the Transfer of its amount from the payer to its recipient), or undefined: the nonce
   * was used by another authorization of the payer's, or canceled, and this one never paid.
   */
  async payingTransaction(payment: X402Payment, signedSince: number): Promise<Hash | undefined> {
    const { client } = this.reader(payment.chainId);
    const { from, nonce } = payment.authorization;
    return this.read(async () => {
      const head = await client.getBlock({ blockTag: 'latest' });
      const back = await client.getBlock({ blockNumber: head.number > 100n ? head.number - 100n : 0n });
      // Blocks since the payer could have signed, from the chain's own recent pace.
      const interval = Math.max(0.05, Number(head.timestamp - back.timestamp) / Math.max(1, Number(head.number - back.number)));
      const span = BigInt(Math.ceil(Math.max(0, Number(head.timestamp) - signedSince) / interval)) + 10n;
      const fromBlock = head.number > span ? head.number - (span < MAX_LOOKBACK_BLOCKS ? span : MAX_LOOKBACK_BLOCKS) : 0n;
      const used = await client.getContractEvents({
        address: payment.token.address,
        abi: tokenAbi,
        eventName: 'AuthorizationUsed',
        args: { authorizer: from, nonce },
        fromBlock,
        toBlock: head.number,
      });
      const log = used.find((l) => !l.removed && l.transactionHash);
      if (!log?.transactionHash) return undefined;
      const paid = await paidIn(client, payment, log.transactionHash, log.logIndex ?? -2);
      return paid ? log.transactionHash : undefined;
    });
  }

  /**
   * The transaction using this payment's nonce in the node's `pending` view (sent, not yet at depth),
   * whoever sent it; undefined when none is seen or the node cannot say. Only for a pending answer.
   */
  async pendingTransaction(payment: X402Payment): Promise<Hash | undefined> {
    const { client } = this.reader(payment.chainId);
    const { from, nonce } = payment.authorization;
    try {
      const logs = await client.getContractEvents({
        address: payment.token.address,
        abi: tokenAbi,
        eventName: 'AuthorizationUsed',
        args: { authorizer: from, nonce },
        fromBlock: 'pending',
        toBlock: 'pending',
      });
      return logs.find((l) => !l.removed && l.transactionHash)?.transactionHash ?? undefined;
    } catch {
      return undefined;
    }
  }

  private async read<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof X402Refusal || err instanceof AuthcapError) throw err;
      throw new AuthcapError('chain_unavailable', 'the chain node could not be read right now; retry shortly');
    }
  }
}
