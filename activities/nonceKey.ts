// The value of the AuthorizationNonce search attribute: SHA-256 of "payer:nonce" (both lower-case),
// prefixed by the network and token for every token but the one-network shape's (its open runs keep
// their digests). Operators and the log watcher find an authorization by it; the nonce itself stays
// encrypted. The same payer and nonce on two networks (or tokens) are two payments, two digests.
import { createHash } from 'node:crypto';

export function nonceSearchKey(payer: string, nonce: string, scope = ''): string {
  const pair = `${payer.toLowerCase()}:${nonce.toLowerCase()}`;
  return createHash('sha256')
    .update(scope ? `${scope}:${pair}` : pair)
    .digest('hex');
}
