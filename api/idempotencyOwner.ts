// Who holds a pending Idempotency-Key claim in the shared database, and whether that process is
// known to be gone. A claim whose process died mid-request would otherwise answer 409
// idempotency_key_in_use until it goes stale; when the holder ran on this very machine (same
// hostname, same kernel boot, same PID namespace) the kernel can tell at once whether it still runs.
// Anywhere else nothing can be known from here, and only the stale timeout frees the claim.
import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

export interface ClaimOwner {
  host: string;
  /** The kernel's boot id: a reboot ends every process that ran before it. */
  boot: string | null;
  /** The PID namespace: the same pid in two containers on one host names two processes. */
  pidns: string | null;
  pid: number;
  /** This process's own id: a process started later with a reused pid is not the one that claimed. */
  instance: string;
  /** This claim's id: complete, release and takeover change the row only while it is still theirs. */
  claim: string;
}

const INSTANCE = randomUUID();

function readOrNull(read: () => string): string | null {
  try {
    return read().trim() || null;
  } catch {
    return null;
  }
}

const machine = {
  host: hostname(),
  boot: readOrNull(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')),
  pidns: readOrNull(() => readlinkSync('/proc/self/ns/pid')),
};

/** An owner for a new claim by this process. */
export function newOwner(): ClaimOwner {
  return { ...machine, pid: process.pid, instance: INSTANCE, claim: randomUUID() };
}

/** True only when the claiming process certainly no longer runs; unknown counts as running. */
export function ownerGone(owner: Partial<ClaimOwner> | null | undefined): boolean {
  if (!owner || typeof owner.pid !== 'number' || !machine.boot || !machine.pidns) return false;
  if (owner.host !== machine.host || owner.boot !== machine.boot || owner.pidns !== machine.pidns) return false;
  if (owner.pid === process.pid) return owner.instance !== INSTANCE;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
