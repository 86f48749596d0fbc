// What this process learned from the workflow's attempt budget: an authorization that answered
// `too_many_attempts` refuses the same kind of attempt until its cool-down ends. Remembering that
// here answers a flood from memory, so it never reaches Temporal or a worker: a checkout link's
// holder cannot slow other orders down. The payer's own ECDSA signature is never refused here.
import type { Address, Hex } from 'viem';
import { AuthcapError } from '../../domain/errors.js';
import { isPayerKeySignatureOf } from '../../runtime/secp256k1.js';

export type RefusedKind = 'signature' | 'cancel' | 'capture';

interface Refusal {
  untilMs: number;
  message: string;
  /** For signatures: the digest and signer whose own signature still goes through. */
  digest?: Hex;
  signer?: Address;
}

const MAX_ENTRIES = 10_000;

export class RefusalCache {
  private readonly entries = new Map<string, Refusal>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Throws the remembered `too_many_attempts` while it holds, unless this is the signer's own signature. */
  screen(id: string, kind: RefusedKind, signature?: Hex): void {
    const key = `${kind}:${id}`;
    const refusal = this.entries.get(key);
    if (!refusal) return;
    const waitMs = refusal.untilMs - this.now();
    if (waitMs <= 0) {
      this.entries.delete(key);
      return;
    }
    if (signature && refusal.digest && refusal.signer && isPayerKeySignatureOf(refusal.digest, signature, refusal.signer)) return;
    const retryAfterSeconds = Math.ceil(waitMs / 1000);
    throw new AuthcapError('too_many_attempts', refusal.message, { retryAfterSeconds });
  }

  /** Keeps a `too_many_attempts` answer for as long as it said to wait. */
  remember(id: string, kind: RefusedKind, error: AuthcapError, signed?: { digest: Hex; signer: Address }): void {
    const seconds = Number(error.details?.retryAfterSeconds);
    if (!Number.isFinite(seconds) || seconds <= 0) return;
    // Without the signer's digest the payer's own signature could not be told apart: keep nothing.
    if (kind !== 'capture' && !signed) return;
    const key = `${kind}:${id}`;
    this.entries.delete(key);
    this.entries.set(key, { untilMs: this.now() + seconds * 1000, message: error.message, ...signed });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }
}
