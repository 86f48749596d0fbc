// What `authcap doctor` reports: one line per check, its status, what was checked and, when something
// is wrong, what in plain words and what to do. Pure: the checks (./*Checks.ts) make these, the CLI
// (client/cliDoctor.ts) prints them.

/** `fail` stops payments (exit 1); `warn` deserves a look; `skip`: not checked because of a failure above. */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export type CheckArea = 'settings' | 'deployment' | 'network' | 'token' | 'merchant' | 'temporal' | 'codec' | 'webhook';

export interface DoctorCheck {
  status: CheckStatus;
  area: CheckArea;
  /** What was checked: "eip155:31337", "eip155:31337 token 0x…", "search attributes". */
  subject: string;
  /** What was found, in plain words. */
  message: string;
  /** What to do, when it is not ok. */
  fix?: string;
}

export interface DoctorReport {
  ok: boolean;
  counts: Record<CheckStatus, number>;
  checks: DoctorCheck[];
}

export const check = (status: CheckStatus, area: CheckArea, subject: string, message: string, fix?: string): DoctorCheck => ({
  status,
  area,
  subject,
  message,
  ...(fix ? { fix } : {}),
});

export function report(checks: DoctorCheck[]): DoctorReport {
  const counts: Record<CheckStatus, number> = { ok: 0, warn: 0, fail: 0, skip: 0 };
  for (const c of checks) counts[c.status] += 1;
  return { ok: counts.fail === 0, counts, checks };
}

/** 0 when nothing failed, 1 otherwise: a deploy script may run `authcap doctor` as a gate. */
export const exitCodeOf = (r: DoctorReport): number => (r.ok ? 0 : 1);

/** How each status reads in the table: a failure stands out. */
export const STATUS_LABEL: Record<CheckStatus, string> = { ok: 'ok', warn: 'warn', fail: 'FAIL', skip: 'skip' };

export function summaryLine(r: DoctorReport): string {
  const { ok, warn, fail, skip } = r.counts;
  const parts = [`${ok} ok`, `${warn} warn`, `${fail} FAIL`, ...(skip ? [`${skip} not checked`] : [])];
  return `${parts.join(', ')}: ${r.ok ? (warn ? 'nothing stops payments; look at the warnings' : 'all good') : 'fix what FAILs (what to do follows the —)'}`;
}

/** Every network call a check makes is bounded: a dead node or server must not hang the doctor. */
export const CALL_TIMEOUT_MS = 4_000;

export class TimedOut extends Error {
  override name = 'TimedOut';
}

export async function bounded<T>(promise: Promise<T>, what: string, ms = CALL_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The first line of an error, without the noise of stack traces. */
export const firstLine = (err: unknown): string => ((err as Error)?.message ?? String(err)).split('\n')[0]!;
