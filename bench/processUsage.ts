// CPU and memory of each process of the stack, sampled once a second while a phase runs
// (pidusage reads /proc on Linux: CPU is the share of one core since the previous sample).
import pidusage from 'pidusage';

export interface ProcessFigures {
  /** Mean CPU over the phase, percent of one core. */
  cpuPercent: number;
  /** Largest resident set seen in the phase, MB. */
  rssMb: number;
}

export type UsageByProcess = Record<string, ProcessFigures>;

export class UsageSampler {
  private timer: NodeJS.Timeout | undefined;
  private readonly samples = new Map<string, { cpu: number[]; rss: number[] }>();

  constructor(private readonly pids: Record<string, number | undefined>) {}

  start(intervalMs = 1_000): void {
    this.samples.clear();
    // The first reading only sets pidusage's baseline for the CPU delta.
    void this.sample(false);
    this.timer = setInterval(() => void this.sample(true), intervalMs);
  }

  async stop(): Promise<UsageByProcess> {
    clearInterval(this.timer);
    await this.sample(true);
    const out: UsageByProcess = {};
    for (const [name, s] of this.samples) {
      out[name] = {
        cpuPercent: Math.round((s.cpu.reduce((a, b) => a + b, 0) / Math.max(1, s.cpu.length)) * 10) / 10,
        rssMb: Math.round(Math.max(0, ...s.rss) / 1e5) / 10,
      };
    }
    return out;
  }

  private async sample(record: boolean): Promise<void> {
    await Promise.all(Object.entries(this.pids).map(async ([name, pid]) => {
      if (!pid) return;
      const stat = await pidusage(pid).catch(() => undefined);
      if (!stat || !record) return;
      const s = this.samples.get(name) ?? { cpu: [], rss: [] };
      s.cpu.push(stat.cpu);
      s.rss.push(stat.memory);
      this.samples.set(name, s);
    }));
  }
}
