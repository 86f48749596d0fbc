// Which network and token an authorization is on: a CAIP-2 network id ("eip155:8453") and the
// token's contract address. Carried in workflow inputs and in a header of every activity.
import type { Address } from 'viem';

export interface ChainRef {
  network: string;
  token: Address;
}

/** The header an activity's chain travels in (workflows set it, the worker's interceptor reads it). */
export const CHAIN_HEADER = 'authcap-chain';

/** An authorization's chain with what amounts need: the token's symbol and decimals (read from the chain at start). */
export interface AuthorizationChain extends ChainRef {
  symbol: string;
  decimals: number;
}

export const sameChain = (a: ChainRef, b: ChainRef) => a.network === b.network && a.token.toLowerCase() === b.token.toLowerCase();
