// Whether the network's token checks contract wallets' (ERC-1271) signatures (runtime/chain/tokenFeatures.ts
// reads it), asked when a payer signs: knowing it then lets the signature be refused while the order
// can still be paid another way, instead of storing an authorization that can never be captured.
import { hasBytesOverloads } from '../runtime/chain/tokenFeatures.js';
import type { ChainContext } from './chainContext.js';

/**
 * Proxied tokens are upgraded in place (USDC went from v2.1 to v2.2 under the same address), so a
 * verdict is read again after this long rather than kept for the worker's lifetime.
 */
const VERDICT_FRESH_MS = 10 * 60_000;

const verdicts = new WeakMap<ChainContext, { at: number; value: Promise<boolean> }>();

/** True when the token has the `bytes signature` overloads, and so checks ERC-1271 signatures. */
export function tokenChecksContractWalletSignatures(ctx: ChainContext): Promise<boolean> {
  const cached = verdicts.get(ctx);
  if (cached && Date.now() - cached.at < VERDICT_FRESH_MS) return cached.value;
  const value = hasBytesOverloads(ctx.publicClient, ctx.tokenAddress);
  verdicts.set(ctx, { at: Date.now(), value });
  // A node that did not answer is no verdict: ask again next time.
  value.catch(() => verdicts.delete(ctx));
  return value;
}
