// Counts what the worker asks of the node: JSON-RPC calls by method, and HTTP round trips (several
// calls travel in one round trip when the transport batches them).
import { http, type HttpTransportConfig, type Transport } from 'viem';

export class RpcMetrics {
  private readonly calls = new Map<string, number>();
  private readonly errors = new Map<string, number>();
  private trips = 0;
  /** Listeners (the worker's Prometheus counters) told of every call and failure. */
  readonly listeners: { call?: (method: string) => void; error?: (method: string) => void } = {};

  recordCall(method: string): void {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    this.listeners.call?.(method);
  }

  recordError(method: string): void {
    this.errors.set(method, (this.errors.get(method) ?? 0) + 1);
    this.listeners.error?.(method);
  }

  recordRoundTrip(): void {
    this.trips += 1;
  }

  snapshot(): { calls: number; roundTrips: number; byMethod: Record<string, number> } {
    const byMethod = Object.fromEntries([...this.calls].sort(([a], [b]) => a.localeCompare(b)));
    return { calls: [...this.calls.values()].reduce((a, b) => a + b, 0), roundTrips: this.trips, byMethod };
  }
}

/** An http transport that batches concurrent calls into one round trip and counts both. */
export function instrumentedHttp(url: string, metrics: RpcMetrics, config: HttpTransportConfig = {}): Transport {
  const inner = http(url, {
    ...config,
    batch: config.batch ?? { wait: 0 },
    onFetchRequest: () => metrics.recordRoundTrip(),
  });
  return (params) => {
    const transport = inner(params);
    return {
      ...transport,
      request: (async (args: { method: string }, options?: unknown) => {
        metrics.recordCall(args.method);
        try {
          return await (transport.request as (a: unknown, o?: unknown) => Promise<unknown>)(args, options);
        } catch (err) {
          metrics.recordError(args.method);
          throw err;
        }
      }) as typeof transport.request,
    };
  };
}
