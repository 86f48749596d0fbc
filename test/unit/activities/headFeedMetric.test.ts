// The head feed's state on the worker's /metrics: one series per state, 1 for the one it is in, so a
// deployment without a WebSocket (`off`, polling by design) is told apart from a feed that broke.
// The networks served also get their failure counters at zero from the first scrape.
import { afterAll, describe, expect, it } from 'vitest';
import type { HeadFeedState, HeadFeedStatus } from '../../../activities/rpc/headFeed.js';
import { CAPTURE_FAILURE_CODES, REFUND_FAILURE_CODES } from '../../../worker/metricLabels.js';
import { startMetricsServer } from '../../../worker/telemetry.js';

const feed = (state: HeadFeedState) => ({
  status: (): HeadFeedStatus => ({ state, live: state === 'live', since: new Date().toISOString(), lastHeadAt: null, detail: state }),
});

describe("the worker's head feed metrics", () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });

  it('say which state each network is in; live is 0 for both a broken feed and none configured', async () => {
    const heads = new Map([
      ['eip155:1', feed('off')],
      ['eip155:2', feed('failing')],
      ['eip155:3', feed('live')],
    ]);
    const metrics = await startMetricsServer(0, '127.0.0.1', undefined, heads);
    closers.push(() => new Promise((resolve) => metrics.server.close(() => resolve())));
    const text = await (await fetch(metrics.url)).text();
    const ones = [...text.matchAll(/^authcap_head_feed_state\{network="([^"]+)",state="(\w+)"\} 1$/gm)].map(([, n, s]) => `${n} ${s}`);
    expect(ones.sort()).toEqual(['eip155:1 off', 'eip155:2 failing', 'eip155:3 live']);
    expect(text.match(/^authcap_head_feed_state\{network="eip155:1",.*$/gm)).toHaveLength(5);
    expect(text).toMatch(/^authcap_head_feed_live\{network="eip155:1"\} 0$/m);
    expect(text).toMatch(/^authcap_head_feed_live\{network="eip155:2"\} 0$/m);
    expect(text).toMatch(/^authcap_head_feed_live\{network="eip155:3"\} 1$/m);
    for (const network of heads.keys()) {
      for (const code of CAPTURE_FAILURE_CODES) expect(text).toContain(`authcap_capture_failures_total{network="${network}",code="${code}"} 0`);
      for (const code of REFUND_FAILURE_CODES) expect(text).toContain(`authcap_refunds_total{network="${network}",outcome="failed",code="${code}"} 0`);
    }
  });
});
