// A token bucket per API key: a runaway client slows down alone (429 with Retry-After) instead of
// starving every order service behind the same API. Public routes (the payer's checkout pages) have
// no key: they get their own limiter, per client address.
import { readVariable } from '../runtime/settings/read.js';

/** The catalog's defaults (runtime/settings/catalog.ts): 500 requests/s per key, 20 per client address on public routes. */
export const DEFAULT_RATE_LIMITS = {
  perKey: readVariable('AUTHCAP_RATE_LIMIT', {}),
  public: readVariable('AUTHCAP_PUBLIC_RATE_LIMIT', {}),
};

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number = perSecond * 2,
    /** Past this many buckets, full ones are dropped: client addresses are unbounded, keys are not. */
    private readonly maxBuckets = 10_000,
  ) {}

  /** Takes a token; returns the seconds to wait when there is none. */
  take(key: string, now = Date.now()): { ok: true } | { ok: false; retryAfterSeconds: number } {
    if (this.buckets.size >= this.maxBuckets && !this.buckets.has(key)) this.sweep(now);
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond)) };
  }

  /** Forgets buckets that have refilled: a new one for the same key starts full anyway. */
  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(key);
    }
  }
}
