// Where the Temporal server's share of a lifecycle goes: the embedded server's own Prometheus
// counters, read before and after a phase. Frontend requests by operation are the calls clients and
// workers make; persistence requests by operation are what those calls cost the database (SQLite
// here); persistence latency is the time spent in it. Divided by lifecycles, the largest rows are
// the calls worth removing.

type Counters = Map<string, number>;

export interface ServerCallsPerLifecycle {
  /** Frontend requests per lifecycle, by gRPC operation (polls included). */
  frontend: Record<string, number>;
  /** Persistence requests per lifecycle, by operation. */
  persistence: Record<string, number>;
  /** Milliseconds spent in persistence per lifecycle, by operation. */
  persistenceMs: Record<string, number>;
  /**
   * Persistence writes of workflow executions per lifecycle (persistence_requests{operation=…}, every
   * service): UpdateWorkflowExecution (each change to a running execution's state) and
   * CreateWorkflowExecution (each start, continue-as-new included). Absent in older results.
   */
  writes?: { UpdateWorkflowExecution: number; CreateWorkflowExecution: number };
}

const wanted = /^(service_requests|persistence_requests|persistence_latency_sum)\{([^}]*)\} ([0-9.e+-]+)$/gm;

export async function scrapeServerCounters(metricsUrl: string, namespace: string): Promise<Counters> {
  const text = await (await fetch(metricsUrl)).text();
  const out: Counters = new Map();
  for (const [, metric, labelText, value] of text.matchAll(wanted)) {
    const labels = Object.fromEntries([...labelText!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (labels.namespace !== namespace) continue;
    if (metric === 'service_requests' && labels.service_name !== 'frontend') continue;
    const key = `${metric}|${labels.operation}`;
    out.set(key, (out.get(key) ?? 0) + Number(value));
  }
  return out;
}

export function serverCallsPerLifecycle(before: Counters, after: Counters, lifecycles: number, top = 12): ServerCallsPerLifecycle {
  const pick = (metric: string, scale = 1) => {
    const rows: [string, number][] = [];
    for (const [key, value] of after) {
      const [m, operation] = key.split('|') as [string, string];
      if (m !== metric) continue;
      const delta = ((value - (before.get(key) ?? 0)) * scale) / lifecycles;
      if (delta > 0) rows.push([operation, Math.round(delta * 100) / 100]);
    }
    return Object.fromEntries(rows.sort((a, b) => b[1] - a[1]).slice(0, top));
  };
  const writes = (operation: string) => {
    const key = `persistence_requests|${operation}`;
    return Math.round((((after.get(key) ?? 0) - (before.get(key) ?? 0)) / lifecycles) * 100) / 100;
  };
  // Temporal's Prometheus reporter records latencies in seconds.
  return {
    frontend: pick('service_requests'),
    persistence: pick('persistence_requests'),
    persistenceMs: pick('persistence_latency_sum', 1000),
    writes: { UpdateWorkflowExecution: writes('UpdateWorkflowExecution'), CreateWorkflowExecution: writes('CreateWorkflowExecution') },
  };
}
