// Summaries the bench reports: percentiles of a sample, and ratios to the floor.

export interface Distribution {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** One decimal: what every figure in the report is given with. */
export const round = (v: number) => Math.round(v * 10) / 10;

/** Nearest-rank percentiles, in whole milliseconds (or whatever unit the sample is in). */
export function distribution(sample: readonly number[]): Distribution {
  const sorted = [...sample].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);
  return {
    n: sorted.length,
    p50: round(at(50)),
    p95: round(at(95)),
    p99: round(at(99)),
    max: round(sorted.at(-1) ?? NaN),
    mean: round(sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length)),
  };
}

/** `value / floor`, two decimals; null when either side is missing. */
export function ratio(value: number | undefined, floor: number | undefined): number | null {
  if (value === undefined || floor === undefined || !Number.isFinite(value) || !Number.isFinite(floor) || floor === 0) return null;
  return Math.round((value / floor) * 100) / 100;
}

/** Per-method difference between two counter snapshots, divided by `per`. */
export function perUnit(before: Record<string, number>, after: Record<string, number>, per: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [method, count] of Object.entries(after)) {
    const delta = count - (before[method] ?? 0);
    if (delta > 0) out[method] = Math.round((delta / per) * 100) / 100;
  }
  return Object.fromEntries(Object.entries(out).sort(([, a], [, b]) => b - a));
}

export function total(counts: Record<string, number>): number {
  return Math.round(Object.values(counts).reduce((a, b) => a + b, 0) * 100) / 100;
}

/** Runs `task` for each item with at most `concurrency` at once; results in item order. */
export async function pool<T, R>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  });
  await Promise.all(lanes);
  return results;
}
