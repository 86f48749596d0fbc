// What one payment costs Temporal, held where a change could quietly bring it back: the create's
// round trips, and the event stream's memo writes (each one a history event and a visibility write).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import proto from '@temporalio/proto';
import { AuthcapClient } from '../../client/authcapClient.js';
import { parseResourceId } from '../../domain/ids.js';
import { eventStreamWorkflowId } from '../../domain/events.js';
import { dataConverterFromEnv } from '../../runtime/temporal.js';
import { api, dev, newOrderId, payer, walletSign } from '../support/api.js';
import { connectTemporal } from '../support/temporal.js';
import { sleep } from '../support/lifecycle.js';

const EventType = proto.temporal.api.enums.v1.EventType;

describe('the cost of one payment', () => {
  const calls = new Map<string, number>();
  let client: AuthcapClient;
  beforeAll(async () => {
    // Every RPC the client library sends, by method: what the Temporal frontend is asked to do.
    const counting: Interceptor = (options, next) => {
      const method = options.method_definition.path.split('/').pop()!;
      calls.set(method, (calls.get(method) ?? 0) + 1);
      return new InterceptingCall(next(options));
    };
    const connection = await Connection.connect({
      address: dev().temporalAddress,
      interceptors: [counting, makeGrpcRetryInterceptor(defaultGrpcRetryOptions())],
    });
    client = new AuthcapClient(new Client({ connection, namespace: dev().temporalNamespace, dataConverter: dataConverterFromEnv() }), 'authcap');
  });
  afterAll(() => client?.close());

  it('a create is one look for an earlier attempt and one update-with-start: the answer names the run', async () => {
    calls.clear();
    const created = await client.createAuthorization({ orderId: newOrderId('cost'), payer: payer(9).address, amount: '0.01' });
    expect(created.state).toBe('drafted');
    expect(calls.get('ExecuteMultiOperation')).toBe(1);
    // The look for an earlier attempt on this order; none after the start to learn the run's id.
    expect(calls.get('DescribeWorkflowExecution') ?? 0).toBeLessThanOrEqual(1);
  });

  it("an authorization's event stream rewrites its memo once per batch of events, plus once per delivery", async () => {
    const p = payer(9);
    const created = await api('POST', '/v1/authorizations', { orderId: newOrderId('cost'), payer: p.address, amount: '0.01' });
    expect(created.status).toBe(201);
    expect((await api('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: walletSign(created.body.typedData, p.privateKey) })).status).toBe(
      200,
    );
    const captured = await api('POST', `/v1/authorizations/${created.body.id}/capture`);
    expect([200, 201, 202]).toContain(captured.status);
    const temporal = await connectTemporal();
    try {
      const stream = temporal.workflow.getHandle(eventStreamWorkflowId(parseResourceId(created.body.id)!.runId));
      // The stream closes once its final event is recorded and delivered.
      let description = await stream.describe();
      for (let i = 0; i < 150 && description.status.name === 'RUNNING'; i++) {
        await sleep(200);
        description = await stream.describe();
      }
      expect(description.status.name).not.toBe('RUNNING');
      const events = (await stream.fetchHistory()).events!;
      const count = (type: number) => events.filter((e) => e.eventType === type).length;
      // Each recorded batch upserts the search attributes once; each delivery (to endpoints other
      // files of the suite register) is counted in the memo's own summaries.
      const batches = count(EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES);
      const summaries = (description.memo?.deliveries ?? {}) as Record<string, { delivered: number; skipped: number; failed: number }>;
      const deliveries = Object.values(summaries).reduce((sum, s) => sum + s.delivered + s.skipped + s.failed, 0);
      expect(batches).toBeGreaterThan(0);
      expect(count(EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED)).toBeLessThanOrEqual(batches + deliveries);
    } finally {
      await temporal.connection.close();
    }
  }, 60_000);
});
