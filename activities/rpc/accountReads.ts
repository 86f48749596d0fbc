// eth_getTransactionCount and eth_getBalance with every block selector the spec lists. Inputs are
// checked first: a malformed address or selector is a validation_error, and no call is made.
import type { Chain, PublicClient, Transport } from 'viem';
import { parseBlockSelector, parseRpcAddress } from './selectors.js';

export function createAccountReads(client: PublicClient<Transport, Chain>) {
  return {
    /** The account's transaction count at `block`; at `pending`, the next nonce to use. */
    async getTransactionCount(address: unknown, block: unknown = 'latest'): Promise<bigint> {
      const params = [parseRpcAddress(address), parseBlockSelector(block)] as const;
      return BigInt(await client.request({ method: 'eth_getTransactionCount', params: [...params] }));
    },
    /** The native balance in wei at `block`; `pending` is the ~200 ms preconfirmed view. */
    async getBalance(address: unknown, block: unknown = 'latest'): Promise<bigint> {
      const params = [parseRpcAddress(address), parseBlockSelector(block)] as const;
      return BigInt(await client.request({ method: 'eth_getBalance', params: [...params] }));
    },
  };
}
