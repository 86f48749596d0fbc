// Prometheus metrics (prom-client), one registry per process. The API and the worker each expose it
// at /metrics; the metric names are the contract with dashboards, so they only ever grow.
import { collectDefaultMetrics, Registry } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** The text exposition format, for a GET /metrics handler. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}
