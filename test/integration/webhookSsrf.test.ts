// Webhook endpoints cannot aim the worker at the host, the private network or the cloud metadata
// service (finding 5: each of the probe's URLs answered 201 and was POSTed to for 3 days). Receivers
// are real servers on 127.0.0.1; deliveries run the worker's real activity.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { postWebhookEvent } from '../../activities/events.js';
import { verifyWebhook } from '../../runtime/webhookSignature.js';
import { assertWebhookUrlAllowed } from '../../client/webhookEndpoints/endpointRequest.js';
import type { RecordedEvent, WebhookEndpointRecord } from '../../domain/events.js';
import type { Resolver, WebhookAddressPolicy } from '../../runtime/webhookAddressPolicy.js';
import { api } from '../support/api.js';
import { startReceiver, type Receiver } from '../support/webhookReceiver.js';
import { startOwnApi, type OwnApi } from '../support/ownApi.js';

// This file's own API runs as an operator who allowed nothing; the suite's stack allows loopback
// receivers (the other webhook tests need them), and that must not leak in here.
delete process.env.AUTHCAP_WEBHOOK_ALLOW_LOOPBACK;
delete process.env.AUTHCAP_WEBHOOK_ALLOW_PRIVATE;

const PROBE_URLS = [
  'http://127.0.0.1:4000/hooks',
  'http://2130706433/hooks',
  'http://0x7f.1/hooks',
  'http://[::ffff:127.0.0.1]/hooks',
  'http://169.254.169.254/latest/meta-data/',
  'http://localhost:4000/hooks',
  'http://[::1]:4000/hooks',
  'http://10.0.0.1/hooks',
  'http://100.100.100.200/latest/meta-data/',
  'http://[fd00:ec2::254]/latest/meta-data/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://0.0.0.0:4000/hooks',
];

describe('registering a webhook endpoint', () => {
  let own: OwnApi;
  let key: string;
  let url: string;
  beforeAll(async () => {
    own = await startOwnApi('ssrf');
    ({ key, url } = own);
  });
  afterAll(() => own?.close());

  const registered = async () => ((await api('GET', '/v1/webhook_endpoints')).body.data as { url: string }[]).map((e) => e.url).sort();

  it("refuses each of the probe's URLs with 422 webhook_url_not_allowed, naming why, and registers nothing", async () => {
    const before = await registered();
    for (const target of PROBE_URLS) {
      const res = await fetch(`${url}/v1/webhook_endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: target, events: ['*'] }),
      });
      const body = (await res.json()) as any;
      expect(res.status, `${target}: ${JSON.stringify(body)}`).toBe(422);
      expect(body.error.code).toBe('webhook_url_not_allowed');
      expect(body.error.message).toMatch(/loopback|metadata|private|unspecified/);
      expect(['loopback', 'metadata', 'metadata-host', 'private', 'unspecified']).toContain(body.error.details.reason);
    }
    expect(await registered()).toEqual(before);
  });

  it("the suite's stack, which allows loopback receivers, still refuses metadata and link-local addresses", async () => {
    const before = await registered();
    for (const target of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://2852039166/',
      'http://[fe80::1]/',
      'http://[fd00:ec2::254]/',
    ]) {
      const res = await api('POST', '/v1/webhook_endpoints', { url: target, events: ['*'] });
      expect(res.status, `${target}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.error.code).toBe('webhook_url_not_allowed');
    }
    expect(await registered()).toEqual(before);
  });
});

describe('delivering to a registered endpoint', () => {
  const strict: WebhookAddressPolicy = { allowLoopback: false, allowPrivate: false };
  const loopbackOk: WebhookAddressPolicy = { allowLoopback: true, allowPrivate: false };
  const secret = 'whsec_ssrf_test_secret';
  const event = {
    id: 'evt_ssrf_test_0001',
    type: 'authorization.drafted',
    createdAt: new Date().toISOString(),
    orderId: 'ssrf-1',
    data: { object: { id: 'auth_ssrf', state: 'drafted' } },
    sequence: 1,
    recordedAt: new Date().toISOString(),
  } as unknown as RecordedEvent;

  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());
  const port = () => new URL(receiver.url).port;

  function deliver(endpointUrl: string, policy: WebhookAddressPolicy, resolve?: Resolver) {
    const record: WebhookEndpointRecord = {
      id: 'we_ssrfssrfssrfssrf',
      url: endpointUrl,
      events: ['*'],
      description: null,
      createdAt: new Date().toISOString(),
      secret,
    };
    // One delivery attempt, as the endpoint's dispatcher makes it (activities/webhookDispatch.ts).
    return postWebhookEvent(record, event, { addressPolicy: () => policy, resolve, deliveryTimeoutMs: 3_000 });
  }

  async function refusedWith(promise: Promise<unknown>): Promise<ApplicationFailure> {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'the delivery went through').toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }

  it('a name that resolves to loopback is not connected to when loopback is not allowed', async () => {
    const failure = await refusedWith(deliver(`http://localhost:${port()}/hooks`, strict));
    expect(failure.type).toBe('webhook_address_not_allowed');
    expect(failure.nonRetryable).toBe(false);
    expect(receiver.deliveries).toHaveLength(0);
  });

  it('an IP literal registered before the check existed is refused at delivery', async () => {
    for (const target of [`http://127.0.0.1:${port()}/hooks`, `http://[::ffff:127.0.0.1]:${port()}/hooks`]) {
      expect((await refusedWith(deliver(target, strict))).type).toBe('webhook_address_not_allowed');
    }
    expect(receiver.deliveries).toHaveLength(0);
  });

  it('DNS rebinding: a name checked public at registration that now resolves to loopback gets nothing', async () => {
    let answer = '93.184.216.34';
    const rebinding: Resolver = async () => [{ address: answer, family: 4 }];
    const target = `http://hooks.rebind.test:${port()}/hooks`;
    await expect(assertWebhookUrlAllowed(target, strict, rebinding)).resolves.toBeUndefined();
    answer = '127.0.0.1';
    expect((await refusedWith(deliver(target, strict, rebinding))).type).toBe('webhook_address_not_allowed');
    answer = '169.254.169.254';
    expect((await refusedWith(deliver(target, { allowLoopback: true, allowPrivate: true }, rebinding))).type).toBe('webhook_address_not_allowed');
    expect(receiver.deliveries).toHaveLength(0);
    // Control: allowed, the socket goes to exactly the address the check saw (the system resolver has never heard of this name).
    answer = '127.0.0.1';
    expect(await deliver(target, loopbackOk, rebinding)).toBe(200);
    expect(receiver.deliveries).toHaveLength(1);
    const delivered = receiver.deliveries[0]!;
    expect(verifyWebhook(delivered.body, delivered.headers['authcap-signature'], secret).id).toBe(event.id);
    receiver.deliveries.length = 0;
  });

  it('deliveries to an endpoint share one kept-alive connection, and a pooled socket never carries a delivery a stricter policy refuses', async () => {
    const connections: string[] = [];
    let posts = 0;
    const pooled = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        posts += 1;
        res.writeHead(200).end('ok');
      });
    });
    pooled.on('connection', (socket) => connections.push(`${socket.remoteAddress}:${socket.remotePort}`));
    await new Promise<void>((resolve) => pooled.listen(0, '127.0.0.1', resolve));
    try {
      const target = `http://hooks.pool.test:${(pooled.address() as AddressInfo).port}/hooks`;
      const toLoopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
      // Allowed: two deliveries, one connection (opened through the policy's checked lookup).
      expect(await deliver(target, loopbackOk, toLoopback)).toBe(200);
      expect(await deliver(target, loopbackOk, toLoopback)).toBe(200);
      expect(posts).toBe(2);
      expect(connections).toHaveLength(1);
      // The same endpoint under a policy that refuses loopback: refused, and the open socket is not used.
      expect((await refusedWith(deliver(target, strict, toLoopback))).type).toBe('webhook_address_not_allowed');
      expect(posts).toBe(2);
      expect(connections).toHaveLength(1);
    } finally {
      pooled.closeAllConnections();
      await new Promise<void>((resolve) => pooled.close(() => resolve()));
    }
  });

  describe('a receiver that answers a redirect', () => {
    let redirector: Server;
    let redirects = 0;
    let status = 302;
    beforeAll(async () => {
      redirector = createServer((req, res) => {
        redirects += 1;
        req.resume();
        res.writeHead(status, { location: receiver.url }).end();
      });
      await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    });
    afterAll(
      () =>
        new Promise<void>((resolve) => {
          redirector.closeAllConnections();
          redirector.close(() => resolve());
        }),
    );

    it.each([301, 302, 303, 307, 308])('%i is a failed delivery and is not followed', async (code) => {
      status = code;
      const before = redirects;
      const target = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/hooks`;
      const failure = await refusedWith(deliver(target, loopbackOk));
      expect(failure.type).toBe('webhook_refused');
      expect(failure.details).toEqual([{ httpStatus: code }]);
      expect(failure.message).toMatch(/redirects are not followed/);
      expect(redirects).toBe(before + 1);
      expect(receiver.deliveries).toHaveLength(0);
    });
  });
});
