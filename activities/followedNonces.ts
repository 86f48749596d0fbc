// The (authorizer, nonce) pairs this worker's activities are following on the chain right now. The
// log watcher skips them: the activity reads the nonce's own logs (ours, a replacement, an outside
// settlement or a cancellation alike), so a nudge would cost a visibility query and a workflow task
// for nothing. Counted, not a set: two attempts of one capture may overlap for a moment.
import { pairKey } from './nonceState.js';

export class FollowedNonces {
  private readonly counts = new Map<string, number>();

  /** Marks the pair followed until the returned function is called. */
  follow(authorizer: string, nonce: string): () => void {
    const key = pairKey(authorizer, nonce);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left > 0) this.counts.set(key, left);
      else this.counts.delete(key);
    };
  }

  has(authorizer: string, nonce: string): boolean {
    return this.counts.has(pairKey(authorizer, nonce));
  }

  get size(): number {
    return this.counts.size;
  }
}
