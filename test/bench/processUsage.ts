// CPU and memory of each process of the stack while a phase runs. CPU is exact: cumulative CPU
// time read from /proc at the phase's start and end (test/bench/cpuTime.ts). Memory is sampled once a
// second with pidusage (resident set has no cumulative counter; the largest sample is kept).
import pidusage from 'pidusage';
import { cpuMsByTree } from './cpuTime.js';

export interface ProcessFigures {
  /** CPU over the phase, percent of one core (CPU time ÷ wall time). */
  cpuPercent: number;
  /** CPU time the process (and its children) used over the phase, ms. */
  cpuMs: number;
  /** Largest resident set seen in the phase, MB. */
  rssMb: number;
}

export type UsageByProcess = Record<string, ProcessFigures>;

export class UsageSampler {
  private timer: NodeJS.Timeout | undefined;
  private readonly rss = new Map<string, number[]>();
  private cpuAtStart: Record<string, number> = {};
  private startedAt = 0;

  /** Each name's process, or several summed (two workers, the Temporal server and its PostgreSQL). */
  constructor(private readonly pids: Record<string, number | number[] | undefined>) {}

  start(intervalMs = 1_000): void {
    this.rss.clear();
    this.cpuAtStart = cpuMsByTree(this.pids);
    this.startedAt = performance.now();
    void this.sample();
    this.timer = setInterval(() => void this.sample(), intervalMs);
  }

  async stop(): Promise<UsageByProcess> {
    clearInterval(this.timer);
    const cpuAtEnd = cpuMsByTree(this.pids);
    const wallMs = performance.now() - this.startedAt;
    await this.sample();
    const out: UsageByProcess = {};
    for (const name of Object.keys(cpuAtEnd)) {
      const cpuMs = Math.max(0, cpuAtEnd[name]! - (this.cpuAtStart[name] ?? cpuAtEnd[name]!));
      out[name] = {
        cpuPercent: Math.round((cpuMs / Math.max(1, wallMs)) * 1000) / 10,
        cpuMs: Math.round(cpuMs),
        rssMb: Math.round(Math.max(0, ...(this.rss.get(name) ?? [])) / 1e5) / 10,
      };
    }
    return out;
  }

  private async sample(): Promise<void> {
    await Promise.all(
      Object.entries(this.pids).map(async ([name, given]) => {
        const pids = [given ?? []].flat();
        if (pids.length === 0) return;
        const stats = await Promise.all(pids.map((pid) => pidusage(pid).catch(() => undefined)));
        if (stats.every(Boolean)) this.rss.set(name, [...(this.rss.get(name) ?? []), stats.reduce((sum, s) => sum + s!.memory, 0)]);
      }),
    );
  }
}
