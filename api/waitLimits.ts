// Caps on the long polls (GET …?wait=) open at once, per API key and per API process. An open wait
// is cheap (a socket, and a share of one Temporal long poll per authorization), but not free, and
// a read-only key is enough to open one: without a bound, one caller could hold thousands and starve
// every other caller of the process. Past a cap the wait is refused with 429 `rate_limited` and a
// Retry-After saying when the soonest of the open waits it counts against ends (a slot frees by then).
//   AUTHCAP_MAX_WAITS_PER_KEY (100): a tenth of a process, so ten busy keys fit before it is full;
//     an order service that waits on more at once should take webhooks instead.
//   AUTHCAP_MAX_WAITS (1000): this process's open waits over all keys; each API process has its own.
import { AuthcapError } from '../domain/errors.js';
import { readVariable } from '../runtime/settings/read.js';

export interface WaitLimitSettings {
  perKey: number;
  perProcess: number;
}

/** The catalog's defaults (runtime/settings/catalog.ts): 100 per key, 1000 per process. */
export const DEFAULT_WAIT_LIMITS: WaitLimitSettings = {
  perKey: readVariable('AUTHCAP_MAX_WAITS_PER_KEY', {}),
  perProcess: readVariable('AUTHCAP_MAX_WAITS', {}),
};

/** One open wait: when it ends at the latest. */
interface Slot {
  endsAt: number;
}

export class WaitLimits {
  private readonly byKey = new Map<string, Set<Slot>>();
  private readonly all = new Set<Slot>();

  constructor(readonly settings: WaitLimitSettings = DEFAULT_WAIT_LIMITS) {
    for (const [name, value] of Object.entries(settings)) {
      if (!Number.isSafeInteger(value) || value < 1) throw new Error(`wait limit ${name} must be a whole number of at least 1, got ${value}`);
    }
  }

  /** Open waits now: this key's, or the whole process's. */
  open(key?: string): number {
    return key === undefined ? this.all.size : (this.byKey.get(key)?.size ?? 0);
  }

  /**
   * Holds a slot for a wait of at most `seconds` by `key`; throws `rate_limited` past either cap.
   * Returns the release: call it once the wait has answered.
   */
  hold(key: string, seconds: number, now = Date.now()): () => void {
    const mine = this.byKey.get(key) ?? new Set<Slot>();
    if (mine.size >= this.settings.perKey) {
      throw refused(`this API key already has ${mine.size} waits open (at most ${this.settings.perKey})`, mine, now);
    }
    if (this.all.size >= this.settings.perProcess) {
      throw refused(`this API process already has ${this.all.size} waits open (at most ${this.settings.perProcess})`, this.all, now);
    }
    const slot: Slot = { endsAt: now + seconds * 1000 };
    mine.add(slot);
    this.byKey.set(key, mine);
    this.all.add(slot);
    return () => {
      this.all.delete(slot);
      mine.delete(slot);
      if (mine.size === 0 && this.byKey.get(key) === mine) this.byKey.delete(key);
    };
  }
}

function refused(why: string, slots: Set<Slot>, now: number): AuthcapError {
  let soonest = Number.POSITIVE_INFINITY;
  for (const slot of slots) soonest = Math.min(soonest, slot.endsAt);
  const retryAfterSeconds = Math.max(1, Math.ceil((soonest - now) / 1000));
  return new AuthcapError('rate_limited', `${why}; retry in ${retryAfterSeconds} s, or take webhooks to hear of every change without waiting`, {
    retryAfterSeconds,
  });
}
