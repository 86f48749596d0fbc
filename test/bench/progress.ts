// One progress bar per phase on stderr (cli-progress); plain lines when stderr is not a terminal.
import { SingleBar, Presets } from 'cli-progress';

export interface Progress {
  tick(n?: number): void;
  done(summary?: string): void;
}

export function phase(name: string, total: number): Progress {
  if (!process.stderr.isTTY) {
    process.stderr.write(`bench: ${name} (${total})…\n`);
    return { tick: () => undefined, done: (summary) => void process.stderr.write(`bench: ${name}: ${summary ?? 'done'}\n`) };
  }
  const bar = new SingleBar(
    { format: `${name.padEnd(34)} [{bar}] {value}/{total} {duration_formatted}`, stream: process.stderr, hideCursor: true },
    Presets.shades_classic,
  );
  bar.start(total, 0);
  return {
    tick: (n = 1) => bar.increment(n),
    done: (summary) => {
      bar.stop();
      if (summary) process.stderr.write(`  ${summary}\n`);
    },
  };
}
