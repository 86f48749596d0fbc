// "Where it goes" in a run's report: the Temporal server's requests and persistence work per
// lifecycle in the highest-concurrency row, and, with --profile, the worker's and API's CPU by place.
import { markdownTable } from 'markdown-table';
import type { BenchResults } from './results.js';

const list = (record: Record<string, number>, unit = '') =>
  Object.entries(record)
    .map(([k, v]) => `${k} ${v}${unit}`)
    .join(', ') || '—';

export function whereItGoesMarkdown(r: Pick<BenchResults, 'concurrency' | 'profile' | 'profileSplit'>): string {
  const focus = [...r.concurrency].reverse().find((c) => c.serverCalls);
  const lines: string[] = [];
  if (focus?.serverCalls) {
    const s = focus.serverCalls;
    lines.push(
      `**Where the Temporal server's share goes** (concurrency ${focus.concurrency}, per lifecycle, from the server's own metrics):`,
      '',
      `- frontend requests: ${list(s.frontend)}`,
      `- persistence requests: ${list(s.persistence)}`,
      `- time in persistence: ${list(s.persistenceMs, ' ms')}`,
      '',
    );
  }
  const split = r.profileSplit;
  if (split) {
    const parts = [...new Set([...split.worker, ...split.api].map((row) => row.part))];
    const of = (rows: typeof split.worker, part: string) => rows.find((row) => row.part === part)?.ms.toFixed(2) ?? '—';
    lines.push(
      `**The profile split** (concurrency ${split.concurrency}, ${split.lifecycles} lifecycles; CPU ms per lifecycle; the worker's workflows in its profiled thread; library time charged to the part that called it):`,
      '',
      markdownTable([['part', 'worker', 'API'], ...parts.map((part) => [part, of(split.worker, part), of(split.api, part)])]),
      '',
    );
  }
  for (const [name, p] of Object.entries(r.profile ?? {})) {
    if (p.busyMs === 0) continue;
    lines.push(
      `**Where the ${name}'s CPU goes** (V8 profile over the highest-concurrency row, self time: ${p.busyMs} ms busy in ${p.wallMs} ms):`,
      '',
      markdownTable([['place', 'ms', '%'], ...p.byPlace.map((row) => [row.place, String(row.ms), String(row.share)])]),
      '',
      `Hottest functions: ${p.hottest
        .slice(0, 10)
        .map((f) => `${f.fn} (${f.place}) ${f.ms} ms`)
        .join('; ')}.`,
      '',
    );
  }
  return lines.join('\n');
}
