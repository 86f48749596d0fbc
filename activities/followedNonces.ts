// The (authorizer, nonce) pairs this worker's activities are following on the chain right now, or
// followed to an outcome moments ago. The log watcher skips them: the activity reads the nonce's own
// logs (ours, a replacement, an outside settlement or a cancellation alike) and its workflow learns
// the outcome from it, so a nudge would cost a visibility query and a workflow task for nothing. A
// follower that reached an outcome is remembered for a while: the watcher's subscription often
// delivers the very log a moment after the follower has returned. Counted, not a set: two attempts
// of one capture may overlap for a moment.
import { pairKey } from '../domain/eip3009.js';

/** How long a pair counts as followed after its follower returned an outcome. */
export const LINGER_MS = 60_000;

export class FollowedNonces {
  private readonly counts = new Map<string, number>();
  private readonly lingering = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Marks the pair followed until the returned function is called; `settled`: the follower reached
   * an outcome its workflow will record (a failed or cancelled one leaves the pair to the watcher at once).
   */
  follow(authorizer: string, nonce: string): (settled?: boolean) => void {
    const key = pairKey(authorizer, nonce);
    this.sweep();
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let done = false;
    return (settled = false) => {
      if (done) return;
      done = true;
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left > 0) this.counts.set(key, left);
      else this.counts.delete(key);
      if (!settled) return;
      // Re-inserted, so the map stays in expiry order and a sweep stops at the first live entry.
      this.lingering.delete(key);
      this.lingering.set(key, this.now() + LINGER_MS);
    };
  }

  has(authorizer: string, nonce: string): boolean {
    const key = pairKey(authorizer, nonce);
    if (this.counts.has(key)) return true;
    const until = this.lingering.get(key);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.lingering.delete(key);
    return false;
  }

  /** Pairs followed right now, and lingering. */
  get size(): number {
    this.sweep();
    return this.counts.size + this.lingering.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, until] of this.lingering) {
      if (until > now) return;
      this.lingering.delete(key);
    }
  }
}
