// A token bucket per API key: a runaway client slows down alone (429 with Retry-After) instead of
// starving every order service behind the same API.
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number = perSecond * 2,
  ) {}

  static fromEnv(env: NodeJS.ProcessEnv = process.env): RateLimiter {
    const rate = Number(env.AUTHCAP_RATE_LIMIT ?? 500);
    return new RateLimiter(Number.isFinite(rate) && rate > 0 ? rate : 500);
  }

  /** Takes a token; returns the seconds to wait when there is none. */
  take(key: string, now = Date.now()): { ok: true } | { ok: false; retryAfterSeconds: number } {
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
}
