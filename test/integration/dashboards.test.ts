// Issue 29: the Prometheus alert rules (ops/prometheus/alerts.yml) and the Grafana dashboard
// (ops/grafana/authcap-dashboard.json) query only what authcap exports. Every expression is parsed
// with Prometheus's own grammar (@prometheus-io/lezer-promql), and every metric it selects must have
// series on a running worker's /metrics (its AUTHCAP_WORKER_METRICS_PORT, a process of its own) or
// an API's /metrics, after one capture, one refund, one refused JSON-RPC call, one refused capture
// and two webhook endpoints (one accepting, one refusing) made them appear. The counters the rules
// take increase() of exist at zero before their first event, and move by exactly what happened.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parser } from '@prometheus-io/lezer-promql';
import { http, createWalletClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { parse as parseYaml } from 'yaml';
import { freePort } from '../../devstack/process.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { repoRoot } from '../support/lifecycle.js';
import { api } from '../support/api.js';
import { call, capturedIn, newPayer, refund, startIsolatedWorld, storedIn, tokens, type IsolatedWorld } from '../support/refunds.js';
import { startReceiver, type Receiver } from '../support/webhookReceiver.js';
import * as registeredWorkflows from '../../workflows/index.js';
import { CAPTURE_FAILURE_CODES, HEAD_FEED_STATES, REFUND_FAILURE_CODES } from '../../worker/metricLabels.js';

const rulesFile = join(repoRoot, 'ops/prometheus/alerts.yml');
const dashboardFile = join(repoRoot, 'ops/grafana/authcap-dashboard.json');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (parseYaml(readFileSync(rulesFile, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8'));
type Panel = { type: string; title?: string; datasource?: unknown; targets?: { expr?: string }[]; panels?: Panel[] };
/** Every panel's datasource: the dashboard's datasource variable, so it imports into any Grafana. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JavaScript template
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
const panels: Panel[] = (dashboard.panels as Panel[]).flatMap((p) => [p, ...(p.panels ?? [])]).filter((p) => p.type !== 'row');

/** Grafana's variables are not PromQL: give them values of the right kind before parsing. */
const withGrafanaVariables = (expr: string) => expr.replace(/\$\{?(\w+)\}?/g, (_m, name: string) => (name.startsWith('__') ? '5m' : '.*'));

/** Every expression, named by where it comes from. */
const expressions: [string, string][] = [
  ...rules.map((r): [string, string] => [`rule ${r.alert ?? r.record}`, r.expr]),
  ...panels.flatMap((p) => (p.targets ?? []).map((t): [string, string] => [`panel "${p.title}"`, withGrafanaVariables(t.expr ?? '')])),
];

interface Selector {
  metric: string;
  labels: string[];
}

/** Parses with Prometheus's grammar; returns the syntax errors and what each vector selector selects. */
function selectorsOf(expr: string): { errors: string[]; selectors: Selector[] } {
  const errors: string[] = [];
  const selectors: Selector[] = [];
  parser.parse(expr).iterate({
    enter: (node) => {
      if (node.type.isError) errors.push(`syntax error at ${node.from}: "${expr.slice(Math.max(0, node.from - 20), node.to + 20)}"`);
      if (node.name !== 'VectorSelector') return;
      // A selector by __name__ only would escape the check below: none is expected.
      const metric = node.node.getChild('Identifier');
      const labels = node.node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? [];
      selectors.push({
        metric: metric ? expr.slice(metric.from, metric.to) : '',
        labels: labels.map((m) => m.getChild('LabelName')).flatMap((n) => (n ? [expr.slice(n.from, n.to)] : [])),
      });
    },
  });
  if (expr.trim() === '') errors.push('empty expression');
  return { errors, selectors };
}

/** Series Prometheus makes itself for each scrape target, and the labels it adds to every series. */
const FROM_PROMETHEUS = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped']);
const TARGET_LABELS = new Set(['job', 'instance']);

/** The text exposition format: each sample's name with the label names it carries, and the declared families. */
function parseExposition(text: string): { samples: Map<string, Set<string>>; declared: Set<string> } {
  const samples = new Map<string, Set<string>>();
  const declared = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) \S+/.exec(line);
    if (type) declared.add(type[1]!);
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? \S+/.exec(line);
    if (!sample) continue;
    const labels = samples.get(sample[1]!) ?? new Set<string>();
    for (const [, name] of (sample[2] ?? '').matchAll(/([a-zA-Z_]\w*)="/g)) labels.add(name!);
    samples.set(sample[1]!, labels);
  }
  return { samples, declared };
}

/** The sum of the samples of `name` whose labels include `labels`; undefined when none matches. */
function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)/.exec(line);
    if (sample?.[1] !== name) continue;
    const has = Object.fromEntries([...(sample[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => [k, v]));
    if (Object.entries(labels).every(([k, v]) => has[k] === v)) sum = (sum ?? 0) + Number(sample[3]);
  }
  return sum;
}

describe('the alert rules and the dashboard', () => {
  it('parse as PromQL, each expression selecting metrics by name', () => {
    expect(expressions.length).toBeGreaterThan(20);
    for (const [where, expr] of expressions) {
      const { errors, selectors } = selectorsOf(expr);
      expect(errors, `${where}: ${expr}`).toEqual([]);
      expect(selectors.length, `${where} selects nothing: ${expr}`).toBeGreaterThan(0);
      for (const s of selectors) expect(s.metric, `${where} selects a series without naming its metric: ${expr}`).toMatch(/^[a-z_:][a-z0-9_:]*$/);
    }
    // The parser is Prometheus's: a broken expression is caught, not waved through.
    expect(selectorsOf('sum by (network) (rate(authcap_rpc_calls_total[5m])').errors).not.toEqual([]);
  });

  it('give every alert a wait, a severity, a summary, a description and a runbook in the repository', () => {
    expect(rules.length).toBeGreaterThanOrEqual(10);
    const names = rules.map((r) => r.alert);
    expect(new Set(names).size, 'alert names are unique').toBe(names.length);
    for (const rule of rules) {
      const where = `rule ${rule.alert}`;
      expect(rule.alert, where).toMatch(/^Authcap[A-Z]\w+$/);
      expect(rule.for, where).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning'], where).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, where).toBeTruthy();
      expect(rule.annotations?.description, where).toBeTruthy();
      const runbook = rule.annotations?.runbook_url ?? '';
      expect(runbook, where).toMatch(/^docs\/[\w/-]+\.md#[a-z0-9-]+$/);
      expect(existsSync(join(repoRoot, runbook.split('#')[0]!)), `${where}: ${runbook} is not in the repository`).toBe(true);
    }
  });

  it('has a dashboard with a uid, a title, a datasource variable, a network variable and a query on every panel', () => {
    expect(dashboard.uid).toMatch(/^[\w-]{1,40}$/);
    expect(dashboard.title).toBeTruthy();
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    const variables = dashboard.templating.list as { name: string; type: string; query: unknown }[];
    expect(variables.find((v) => v.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(variables.find((v) => v.name === 'network')).toMatchObject({
      type: 'query',
      query: { query: expect.stringMatching(/^label_values\(\w+, network\)$/) },
    });
    const rows = (dashboard.panels as Panel[]).filter((p) => p.type === 'row').map((p) => p.title);
    expect(rows).toEqual(['Payments', 'Chain', 'Relayer', 'Temporal', 'Refunds', 'Webhooks', 'API', 'x402 facilitator', 'Processes']);
    const ids = (dashboard.panels as { id: number }[]).map((p) => p.id);
    expect(new Set(ids).size, 'panel ids are unique').toBe(ids.length);
    for (const panel of panels) {
      expect(panel.datasource, `panel "${panel.title}"`).toEqual(DATASOURCE);
      expect(panel.targets?.length, `panel "${panel.title}" has no query`).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) expect(target.expr, `panel "${panel.title}"`).toBeTruthy();
    }
  });

  describe("against a worker's and an API's /metrics", () => {
    let world: IsolatedWorld;
    let workerMetricsUrl: string;
    let network: string;
    // Armed once the first capture and refund are done: the node then refuses one read.
    let refuseOne = false;
    const receivers: Receiver[] = [];
    const endpoints: string[] = [];

    beforeAll(async () => {
      // The endpoints' registry is one workflow per namespace, on the task queue of the API that made
      // it first: made now through the suite's API, so it never lives on this file's isolated worker
      // (gone once this file ends, and with it every later file's registration).
      const anchor = await api('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/registry-anchor', events: ['authorization.drafted'] });
      expect(anchor.status, JSON.stringify(anchor.body)).toBe(201);
      expect((await api('DELETE', `/v1/webhook_endpoints/${anchor.body.id}`)).status).toBe(200);
      const port = await freePort();
      workerMetricsUrl = `http://127.0.0.1:${port}/metrics`;
      world = await startIsolatedWorld('dashboards', {
        // The webhook receivers are on 127.0.0.1.
        env: { AUTHCAP_WORKER_METRICS_PORT: String(port), AUTHCAP_WEBHOOK_ALLOW_LOOPBACK: '1' },
        proxy: {
          reject: (method) => {
            if (!refuseOne || !method.startsWith('eth_') || method === 'eth_sendRawTransaction') return undefined;
            refuseOne = false;
            return { code: -32603, message: 'internal error (refused once by the dashboards test)' };
          },
        },
      });
      network = `eip155:${world.chain.anvil.chainId}`;
    }, 180_000);
    afterAll(async () => {
      for (const id of endpoints) await call(world, 'DELETE', `/v1/webhook_endpoints/${id}`).catch(() => undefined);
      for (const receiver of receivers) await receiver.close();
      await world?.stop();
    });

    const scrape = async (url: string, key?: string) => {
      const res = await fetch(url, key ? { headers: { authorization: `Bearer ${key}` } } : {});
      expect(res.status, url).toBe(200);
      return res.text();
    };
    const workerText = () => scrape(workerMetricsUrl);

    it('has the failure counters at zero before any failure, and the head feed in exactly one state', async () => {
      const text = await workerText();
      for (const workflowType of Object.keys(registeredWorkflows))
        expect(sampleValue(text, 'authcap_workflow_task_failures_total', { workflow_type: workflowType }), workflowType).toBe(0);
      for (const code of CAPTURE_FAILURE_CODES) expect(sampleValue(text, 'authcap_capture_failures_total', { network, code }), code).toBe(0);
      for (const code of REFUND_FAILURE_CODES) expect(sampleValue(text, 'authcap_refunds_total', { network, outcome: 'failed', code }), code).toBe(0);
      // One state at 1, the one the worker's /readyz names: here `failing`, as the worker's WebSocket
      // URL is its JSON-RPC proxy's, which speaks no WebSocket. (`off`, no WebSocket configured, is
      // in test/unit/activities/headFeedMetric.test.ts.) live says 0 in both; only failing|silent fires the rule.
      const readyzUrl = workerMetricsUrl.replace(/\/metrics$/, '/readyz');
      // The first subscription is refused at once; allow it the moment it takes.
      await vi.waitFor(async () => expect(((await (await fetch(readyzUrl)).json()) as { heads: { state: string } }).heads.state).toBe('failing'), {
        timeout: 30_000,
        interval: 200,
      });
      const feedText = await workerText();
      const states = Object.fromEntries(HEAD_FEED_STATES.map((state) => [state, sampleValue(feedText, 'authcap_head_feed_state', { network, state })]));
      expect(states).toEqual({ live: 0, connecting: 0, failing: 1, silent: 0, off: 0 });
      expect(((await (await fetch(readyzUrl)).json()) as { heads: { state: string } }).heads.state).toBe('failing');
      expect(sampleValue(feedText, 'authcap_head_feed_live', { network })).toBe(0);
      expect(rules.find((r) => r.alert === 'AuthcapHeadFeedDown')?.expr).toContain('authcap_head_feed_state{state=~"failing|silent"}');
    });

    it('counts a capture the precheck refused once, under its code', async () => {
      const before = await workerText();
      const payer = await newPayer(world, tokens('10'));
      const stored = await storedIn(world, payer, '10');
      // The payer moves its tokens away before the merchant captures (it needs gas for that).
      await world.chain.testClient.setBalance({ address: payer.address, value: 10n ** 18n });
      const wallet = createWalletClient({ account: privateKeyToAccount(payer.privateKey), transport: http(world.chain.anvil.rpcUrl) });
      const hash = await wallet.writeContract({
        address: world.tokenAddress,
        abi: tokenAbi,
        functionName: 'transfer',
        args: [world.chain.owner.address, tokens('10')],
        chain: null,
      } as never);
      expect((await world.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
      const refused = await call(world, 'POST', `/v1/authorizations/${stored.id}/capture`);
      expect(refused.status, JSON.stringify(refused.body)).toBe(422);
      expect(refused.body.error.code).toBe('insufficient_balance');

      const after = await workerText();
      const count = (text: string, code?: string) => sampleValue(text, 'authcap_capture_failures_total', { network, ...(code ? { code } : {}) });
      expect(count(after, 'insufficient_balance')).toBe(count(before, 'insufficient_balance')! + 1);
      // One attempt, one count: no other code moved.
      expect(count(after)).toBe(count(before)! + 1);
    });

    it('counts webhook deliveries by outcome, and reports the refused ones waiting and the endpoint taken for down', async () => {
      const accepting = await startReceiver();
      const refusing = await startReceiver({ failFirst: Number.MAX_SAFE_INTEGER });
      receivers.push(accepting, refusing);
      const register = async (receiver: Receiver) => {
        const res = await call(world, 'POST', '/v1/webhook_endpoints', {
          url: receiver.url,
          events: ['authorization.captured'],
          description: 'dashboards.test',
        });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        endpoints.push(res.body.id);
        return res.body.id as string;
      };
      const ok = await register(accepting);
      const down = await register(refusing);
      // Each dispatcher's counters exist at zero once its slice runs, before any delivery.
      await vi.waitFor(
        async () => {
          const text = await workerText();
          for (const endpoint of [ok, down])
            for (const outcome of ['delivered', 'refused', 'given_up'])
              expect(sampleValue(text, 'authcap_webhook_deliveries_total', { endpoint, outcome }), `${endpoint} ${outcome}`).toBeDefined();
        },
        { timeout: 30_000, interval: 200 },
      );

      // What makes the other series appear: a capture (latency, state changes, relayer queue, the
      // webhook events), a refund, and one JSON-RPC call the node refuses (the capture after it still
      // lands: reads retry).
      const payer = await newPayer(world);
      const captured = await capturedIn(world, payer, '5');
      expect((await refund(world, captured.id, { amount: '1', reason: 'dashboards test' })).state).toBe('succeeded');
      refuseOne = true;
      expect((await capturedIn(world, payer, '2')).state).toBe('captured');
      expect(refuseOne, 'the node was asked something after the rejection was armed').toBe(false);

      // Every POST is counted once, by what the receiver answered. Read where nothing is in flight
      // (other files' captures reach these endpoints too: dispatchers read the whole namespace).
      const outcomes = (text: string, endpoint: string) =>
        Object.fromEntries(
          ['delivered', 'refused', 'given_up'].map((outcome) => [outcome, sampleValue(text, 'authcap_webhook_deliveries_total', { endpoint, outcome })]),
        );
      await vi.waitFor(
        async () => {
          expect(accepting.accepted((e) => e.orderId === captured.orderId).map((e) => e.type)).toEqual(['authorization.captured']);
          const text = await workerText();
          expect(outcomes(text, ok)).toEqual({ delivered: accepting.deliveries.length, refused: 0, given_up: 0 });
          expect(sampleValue(text, 'authcap_webhook_endpoint_paused', { endpoint: ok })).toBe(0);
        },
        { timeout: 60_000, interval: 200 },
      );
      await vi.waitFor(
        async () => {
          const text = await workerText();
          // Three refusals in a row take the endpoint for down; its refused event waits for a retry.
          expect(sampleValue(text, 'authcap_webhook_endpoint_paused', { endpoint: down })).toBe(1);
          expect(sampleValue(text, 'authcap_webhook_retrying_attempts', { endpoint: down })).toBeGreaterThanOrEqual(1);
          expect(refusing.deliveries.length).toBeGreaterThanOrEqual(3);
          expect(refusing.deliveries.every((d) => d.status === 500)).toBe(true);
          expect(outcomes(text, down)).toEqual({ delivered: 0, refused: refusing.deliveries.length, given_up: 0 });
        },
        { timeout: 60_000, interval: 200 },
      );
    }, 180_000);

    it('has series of every metric they select, with the labels they match on', async () => {
      const worker = parseExposition(await workerText());
      const apiText = (await call(world, 'GET', '/metrics')).body as string;
      const api = parseExposition(apiText);
      const series = (name: string) => worker.samples.get(name) ?? api.samples.get(name);

      const used = new Map<string, { where: string; labels: Set<string> }>();
      for (const [where, expr] of expressions)
        for (const s of selectorsOf(expr).selectors) {
          const entry = used.get(s.metric) ?? { where, labels: new Set<string>() };
          for (const label of s.labels) entry.labels.add(label);
          used.set(s.metric, entry);
        }
      for (const v of dashboard.templating.list as { query: { query?: string } | string }[]) {
        const query = typeof v.query === 'string' ? v.query : (v.query.query ?? '');
        const [, metric, label] = /^label_values\((\w+), (\w+)\)$/.exec(query) ?? [];
        if (metric) used.set(metric, { where: `variable ${query}`, labels: new Set([label!]) });
      }
      // The worker's metrics come from the worker process, the API's from the API.
      expect(used.has('authcap_capture_seconds_bucket') && worker.samples.has('authcap_capture_seconds_bucket')).toBe(true);
      expect(used.has('authcap_http_requests_total') && api.samples.has('authcap_http_requests_total')).toBe(true);
      expect(worker.samples.get('authcap_rpc_errors_total'), 'the refused call is counted').toBeDefined();
      for (const metric of [
        'authcap_capture_failures_total',
        'authcap_webhook_deliveries_total',
        'authcap_webhook_retrying_attempts',
        'authcap_head_feed_state',
      ])
        expect(used.has(metric), `${metric} is alerted on or shown`).toBe(true);

      const missing: string[] = [];
      for (const [metric, { where, labels }] of used) {
        if (FROM_PROMETHEUS.has(metric)) continue;
        const has = series(metric);
        if (!has) {
          missing.push(`${metric} (${where})`);
          continue;
        }
        for (const label of labels) if (!TARGET_LABELS.has(label)) expect(has, `${where}: ${metric} has no label "${label}"`).toContain(label);
      }
      expect(missing, 'metrics the rules or the dashboard select, with no series on the worker or the API').toEqual([]);
    });

    it("drops an endpoint's gauges once its dispatcher ends, and keeps its counters", async () => {
      const [ok, down] = endpoints;
      const refused = sampleValue(await workerText(), 'authcap_webhook_deliveries_total', { endpoint: down!, outcome: 'refused' });
      for (const id of endpoints.splice(0)) expect((await call(world, 'DELETE', `/v1/webhook_endpoints/${id}`)).status).toBe(200);
      await vi.waitFor(
        async () => {
          const text = await workerText();
          for (const endpoint of [ok!, down!]) {
            expect(sampleValue(text, 'authcap_webhook_retrying_attempts', { endpoint }), endpoint).toBeUndefined();
            expect(sampleValue(text, 'authcap_webhook_endpoint_paused', { endpoint }), endpoint).toBeUndefined();
          }
        },
        { timeout: 60_000, interval: 250 },
      );
      expect(sampleValue(await workerText(), 'authcap_webhook_deliveries_total', { endpoint: down!, outcome: 'refused' })).toBeGreaterThanOrEqual(refused!);
    });
  });
});
