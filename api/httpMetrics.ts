// HTTP metrics for the API's /metrics: requests by route and status, and their latency.
import { Counter, Histogram } from 'prom-client';
import { registry } from '../runtime/metrics.js';

const requests = new Counter({
  name: 'authcap_http_requests_total',
  help: 'HTTP requests answered by the authcap API, by route and status (499: the client closed the request before its body arrived).',
  labelNames: ['route', 'status'] as const,
  registers: [registry],
});

const latency = new Histogram({
  name: 'authcap_http_request_seconds',
  help: 'Time to answer an HTTP request, by route.',
  labelNames: ['route'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
  registers: [registry],
});

export function recordHttpRequest(route: string, status: number, ms: number): void {
  requests.inc({ route, status: String(status) });
  latency.observe({ route }, ms / 1000);
}
