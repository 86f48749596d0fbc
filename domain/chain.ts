// Which network and token an authorization is on: a CAIP-2 network id ("eip155:8453") and the
// token's contract address. Carried in workflow inputs and as the last argument of every activity.
import type { Address } from 'viem';

export interface ChainRef {
  network: string;
  token: Address;
}

/**
 * The mark of an activity's chain argument: workflows add it after the activity's own arguments, so
 * it is sealed with them for that activity; the worker's interceptor takes it off.
 */
export const CHAIN_ARGUMENT = '$authcapChain';

export interface ChainArgument {
  [CHAIN_ARGUMENT]: Partial<ChainRef>;
}

/** The chain an activity's last argument names, if it is the chain argument. */
export function chainOfArgument(arg: unknown): Partial<ChainRef> | undefined {
  if (typeof arg !== 'object' || arg === null || !(CHAIN_ARGUMENT in arg)) return undefined;
  const ref = (arg as ChainArgument)[CHAIN_ARGUMENT];
  return typeof ref === 'object' && ref !== null ? ref : undefined;
}

/** An authorization's chain with what amounts need: the token's symbol and decimals (read from the chain at start). */
export interface AuthorizationChain extends ChainRef {
  symbol: string;
  decimals: number;
}

export const sameChain = (a: ChainRef, b: ChainRef) => a.network === b.network && a.token.toLowerCase() === b.token.toLowerCase();
