// The value of the AuthorizationNonce search attribute: SHA-256 of "payer:nonce" (both lower-case).
// Operators and the log watcher find an authorization by it; the nonce itself stays encrypted.
import { createHash } from 'node:crypto';

export function nonceSearchKey(payer: string, nonce: string): string {
  return createHash('sha256').update(`${payer.toLowerCase()}:${nonce.toLowerCase()}`).digest('hex');
}
