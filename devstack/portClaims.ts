// A port the OS calls free is free only until someone binds it: between picking a port and the child
// process binding it, another process of ours (test files run side by side) may pick the same one,
// and then one child fails to bind while its readiness probe is answered by the other's server. A
// claim — a file created exclusively in a shared directory — closes that window among our processes;
// it lapses after CLAIM_MS, by when the claimant has bound the port or given up.
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLAIM_MS = 5 * 60_000;
const claimsDir = join(tmpdir(), 'authcap-port-claims');

/** True when this process now holds the claim on `port`; false when another process's claim is live. */
export function claimPort(port: number): boolean {
  mkdirSync(claimsDir, { recursive: true });
  const file = join(claimsDir, String(port));
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const age = Date.now() - (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0);
  if (age < CLAIM_MS) return false;
  // A lapsed claim: take it over, unless another process took it over first.
  rmSync(file, { force: true });
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    return false;
  }
}
