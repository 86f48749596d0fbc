// Cumulative CPU time of a process and everything it started, read from /proc (Linux). Read at the
// start and the end of a phase, the difference is exactly what the phase cost each process, rather
// than an average of once-a-second samples that misses short bursts between them.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks per second of /proc's utime/stime (100 on every common Linux, but ask). */
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface Stat {
  name: string;
  ppid: number;
  ticks: number;
  ownTicks: number;
}

/** A /proc stat file (a process's or a thread's), or nothing if it ended before the read. */
function statAt(path: string): Stat | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const n = (i: number) => Number(fields[i] ?? 0);
    // fields[0] is field 3 (state) of proc(5): ppid is field 4, utime..cstime are fields 14..17.
    // ticks counts the children it has reaped too, so one that exits mid-phase is not lost.
    return { name: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), ppid: n(1), ticks: n(11) + n(12) + n(13) + n(14), ownTicks: n(11) + n(12) };
  } catch {
    return undefined;
  }
}

const statOf = (pid: number) => statAt(`/proc/${pid}/stat`);

/** CPU milliseconds used so far by each thread of a process, by thread id, with the thread's name. */
export function cpuMsByThread(pid: number): Map<string, { name: string; ms: number }> {
  const out = new Map<string, { name: string; ms: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = statAt(`/proc/${pid}/task/${tid}/stat`);
    if (stat) out.set(tid, { name: stat.name, ms: (stat.ownTicks * 1000) / TICKS });
  }
  return out;
}

/**
 * CPU milliseconds used so far by each named process tree (the process and its descendants: the
 * worker's and API's esbuild helpers belong to them). Processes outside those trees, the bench
 * itself included, are not counted.
 */
export function cpuMsByTree(roots: Record<string, number | number[] | undefined>): Record<string, number> {
  const stats = new Map<number, Stat>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(Number(entry));
    if (stat) stats.set(Number(entry), stat);
  }
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of stats) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const out: Record<string, number> = {};
  for (const [name, given] of Object.entries(roots)) {
    const tops = [given ?? []].flat().filter((pid) => stats.has(pid));
    if (tops.length === 0) continue;
    let ticks = 0;
    const todo = [...tops];
    for (let pid = todo.pop(); pid !== undefined; pid = todo.pop()) {
      ticks += stats.get(pid)?.ticks ?? 0;
      todo.push(...(children.get(pid) ?? []));
    }
    out[name] = (ticks * 1000) / TICKS;
  }
  return out;
}
