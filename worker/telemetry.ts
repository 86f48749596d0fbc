// The worker's side of telemetry: the sinks workflow code reports to (domain/telemetry.ts), turned
// into Prometheus metrics, and a /metrics endpoint. Sinks are not called during replay, so a
// transition counts once even when a workflow is replayed after a crash.
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { InjectedSinks } from '@temporalio/worker';
import type { AuthcapSinks } from '../domain/telemetry.js';
import { metricsText, registry } from '../runtime/metrics.js';
import { authorizationStates } from '../domain/authorization.js';
import type { TaskFailureTracker } from './taskFailures.js';
import type { HeadFeedStatus } from '../activities/rpc/headFeed.js';
import { CAPTURE_FAILURE_CODES, HEAD_FEED_STATES, REFUND_FAILURE_CODES } from './metricLabels.js';

const transitions = new Counter({
  name: 'authcap_authorization_transitions_total',
  help: 'Authorization state changes seen by this worker, by network, from and to state.',
  labelNames: ['network', 'from', 'to'] as const,
  registers: [registry],
});

const byState = new Gauge({
  name: 'authcap_authorizations',
  help: 'Authorizations by state, as entered and left through this worker since it started (open states can go negative across workers; sum over workers).',
  labelNames: ['state'] as const,
  registers: [registry],
});
for (const state of authorizationStates) byState.set({ state }, 0);

const captureSeconds = new Histogram({
  name: 'authcap_capture_seconds',
  help: 'Capture latency from submission, by network: to preconfirmed (log in the pending view) and to captured (confirmation depth).',
  labelNames: ['network', 'stage'] as const,
  buckets: [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60],
  registers: [registry],
});

const refunds = new Counter({
  name: 'authcap_refunds_total',
  help: 'Refunds that ended, by outcome and, for failures, the reason code (partial-capture releases not included).',
  labelNames: ['network', 'outcome', 'code'] as const,
  registers: [registry],
});

const captureFailures = new Counter({
  name: 'authcap_capture_failures_total',
  help: 'Capture attempts that ended without a capture (refused by the precheck, or the capture command or its transaction failed), by network and the error code recorded as lastError; one per attempt.',
  labelNames: ['network', 'code'] as const,
  registers: [registry],
});

/** A served network's failure counters at zero (inc by 0 makes the series), before any failure. */
export function initialiseFailureSeries(network: string): void {
  for (const code of CAPTURE_FAILURE_CODES) captureFailures.inc({ network, code }, 0);
  for (const code of REFUND_FAILURE_CODES) refunds.inc({ network, outcome: 'failed', code }, 0);
}

const refundSeconds = new Histogram({
  name: 'authcap_refund_seconds',
  help: 'Refund latency, asked for → succeeded (confirmation depth) or failed, by network.',
  labelNames: ['network', 'outcome'] as const,
  buckets: [0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60, 300, 900],
  registers: [registry],
});

const relayerQueue = new Gauge({
  name: 'authcap_relayer_queue_depth',
  help: 'Transactions waiting in the merchant relayers, and in flight (sent, not yet mined), by network.',
  labelNames: ['network', 'kind'] as const,
  registers: [registry],
});

/** `defaultNetwork`: what runs started without a network (which name none) are on: the worker's first. */
export function telemetrySinks(defaultNetwork = ''): InjectedSinks<AuthcapSinks> {
  const on = (report: { network?: string }) => report.network ?? defaultNetwork;
  return {
    telemetry: {
      transition: {
        fn: (_info, t) => {
          transitions.inc({ network: on(t), from: t.from, to: t.to });
          byState.dec({ state: t.from });
          byState.inc({ state: t.to });
        },
        callDuringReplay: false,
      },
      captureConfirmed: {
        fn: (_info, timing) => {
          const network = on(timing);
          if (timing.preconfirmedMs !== null) captureSeconds.observe({ network, stage: 'preconfirmed' }, timing.preconfirmedMs / 1000);
          captureSeconds.observe({ network, stage: 'captured' }, timing.capturedMs / 1000);
        },
        callDuringReplay: false,
      },
      captureFailed: {
        fn: (_info, failure) => captureFailures.inc({ network: on(failure), code: failure.code }),
        callDuringReplay: false,
      },
      refundSettled: {
        fn: (_info, outcome) => {
          const network = on(outcome);
          refunds.inc({ network, outcome: outcome.outcome, code: outcome.code ?? '' });
          refundSeconds.observe({ network, outcome: outcome.outcome }, outcome.ms / 1000);
        },
        callDuringReplay: false,
      },
      relayerQueue: {
        fn: (_info, depth) => {
          // The sum over this worker's relayers on the network would need their ids: the last report stands.
          const network = on(depth);
          relayerQueue.set({ network, kind: 'queued' }, depth.queued);
          relayerQueue.set({ network, kind: 'inflight' }, depth.inflight);
        },
        callDuringReplay: false,
      },
    },
  };
}

/** JSON-RPC calls and errors by method, counted by the chain context's transport. */
export const rpcCalls = new Counter({
  name: 'authcap_rpc_calls_total',
  help: 'JSON-RPC calls this worker made to the node, by network and method.',
  labelNames: ['network', 'method'] as const,
  registers: [registry],
});

export const rpcErrors = new Counter({
  name: 'authcap_rpc_errors_total',
  help: 'JSON-RPC calls that failed, by network and method.',
  labelNames: ['network', 'method'] as const,
  registers: [registry],
});

/** Whatever reports a head feed's state: the chain context's HeadFeed. */
export interface HeadFeedReporter {
  status(): HeadFeedStatus;
}

/** Each network's head feed, by CAIP-2 id. */
export type HeadFeeds = ReadonlyMap<string, HeadFeedReporter>;

const headFeeds = new Set<HeadFeeds>();

new Gauge({
  name: 'authcap_head_feed_live',
  help: 'Whether new blocks arrive over the WebSocket subscription (1), or waits poll the node because it failed, went silent or is not configured (0), by network.',
  labelNames: ['network'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const feeds of headFeeds) for (const [network, feed] of feeds) this.set({ network }, feed.status().live ? 1 : 0);
  },
});

// `live` alone cannot tell a broken feed from none configured (`off`, where polling is the design):
// alerts look at `failing` and `silent`.
new Gauge({
  name: 'authcap_head_feed_state',
  help: "The head feed's state, by network: 1 for the state it is in, 0 for the others (live: blocks arrive over the WebSocket; connecting: first subscription; failing: the socket or subscription failed, retried; silent: subscribed, no block for a minute; off: no WebSocket configured, waits poll by design).",
  labelNames: ['network', 'state'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const feeds of headFeeds)
      for (const [network, feed] of feeds) {
        const current = feed.status().state;
        for (const state of HEAD_FEED_STATES) this.set({ network, state }, state === current ? 1 : 0);
      }
  },
});

/** GET /metrics on its own port (AUTHCAP_WORKER_METRICS_PORT). */
export async function startMetricsServer(
  port: number,
  host = '127.0.0.1',
  failures?: TaskFailureTracker,
  heads?: HeadFeeds,
): Promise<{ url: string; server: Server }> {
  if (heads) headFeeds.add(heads);
  // The networks this worker serves: their failure counters exist from the first scrape.
  for (const network of heads?.keys() ?? []) initialiseFailureSeries(network);
  const server = createServer((req, res) => {
    // The worker's own readiness, for operators: up, which workflows' tasks keep failing here, and
    // whether its waits wake on announced blocks, per network. Always 200: a degraded feed slows
    // that network's captures, it does not stop them or any other network's, so nothing should take
    // this worker out of service for it.
    if (req.url === '/readyz') {
      const failingWorkflows = failures?.failing() ?? [];
      const networks = Object.fromEntries([...(heads ?? [])].map(([network, feed]) => [network, { heads: feed.status() }]));
      const degraded = Object.values(networks).some(({ heads: feed }) => !feed.live && feed.state !== 'off');
      const first = Object.values(networks)[0];
      // `heads`: the first network's, for readers that know one network.
      const body = first ? { status: degraded ? 'degraded' : 'ok', failingWorkflows, heads: first.heads, networks } : { status: 'ok', failingWorkflows };
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    }
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    // A failed collection is a 500 for this scrape, never an unhandled rejection that ends the worker.
    metricsText().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      () => (res.headersSent ? res.destroy() : res.writeHead(500).end()),
    );
  });
  // Slow or half-sent requests must not hold sockets open (the codec server's bounds, for the same reason).
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  server.on('clientError', (_err, socket) => socket.destroy());
  server.once('close', () => heads && headFeeds.delete(heads));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return { url: `http://${host}:${typeof address === 'object' && address ? address.port : port}/metrics`, server };
}
