// The value of the AuthorizationNonce search attribute: SHA-256 of "<network>/<token>:payer:nonce"
// (lower-case). Operators and the log watcher find an authorization by it; the nonce itself stays
// encrypted. The same payer and nonce on two networks (or tokens) are two payments, two digests.
import { createHash } from 'node:crypto';
import type { Address } from 'viem';
import { pairKey } from '../domain/eip3009.js';

/** What a token's digests are scoped by: its network and address. */
export function nonceScopeOf(network: string, token: Address): string {
  return `${network}/${token.toLowerCase()}`;
}

export function nonceSearchKey(payer: string, nonce: string, scope: string): string {
  return createHash('sha256')
    .update(`${scope}:${pairKey(payer, nonce)}`)
    .digest('hex');
}
