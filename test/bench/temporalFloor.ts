// Temporal's own floor in the same sitting (`npm run bench -- --floor <path to temporal-floor/run.mjs>`):
// the cheapest payment-shaped lifecycle Temporal allows on this machine, run before authcap's rows so
// both see the same machine, and the cost targets are judged as ratios to it. The floor is a separate
// tool (it uses no authcap code); without --floor the ratio rows say how to get them.
import { execFileSync } from 'node:child_process';

export interface FloorFigures {
  lifecycles_per_s: number;
  total_cpu_ms_per_lc: number;
  server_cpu_ms_per_lc: number;
  worker_cpu_ms_per_lc: number;
  capture_p95_ms: number;
  workflow_tasks_per_lc: number;
  events_per_lc: number;
}

/** Runs the floor's variant A (`lifecycles` at concurrency `c`) and reads its JSON line. */
export function runTemporalFloor(runMjs: string, lifecycles: number, c: number): FloorFigures {
  const out = execFileSync(process.execPath, [runMjs, 'A', String(lifecycles), String(c), '--json'], { encoding: 'utf8', timeout: 600_000 });
  const line = out
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (!line) throw new Error(`the floor printed no JSON line: ${out.slice(-300)}`);
  return JSON.parse(line) as FloorFigures;
}
