// What one payment costs Temporal, held where a change could quietly bring it back: the create's
// round trips, and the whole payment's workflow tasks and history events, its writes, and the
// workflows it must not need (a nonce claim per draft, a workflow per authorization to hold its events).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import proto from '@temporalio/proto';
import { AuthcapClient } from '../../client/authcapClient.js';
import { TemporalTransport } from '../../client/transport/temporalTransport.js';
import { parseResourceId } from '../../domain/ids.js';
import { eventsFromMemo } from '../../domain/events.js';
import { sealedEntries } from '../../domain/sealed.js';
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
    const temporal = new Client({ connection, namespace: dev().temporalNamespace, dataConverter: dataConverterFromEnv() });
    client = new AuthcapClient(new TemporalTransport(temporal, 'authcap'));
  });
  afterAll(() => client?.close());

  it('a create is one look for an earlier attempt and one update-with-start: the answer names the run', async () => {
    calls.clear();
    const created = await client.authorizations.create({ orderId: newOrderId('cost'), payer: payer(9).address, amount: '0.01' });
    expect(created.state).toBe('drafted');
    expect(calls.get('ExecuteMultiOperation')).toBe(1);
    // The look for an earlier attempt on this order; none after the start to learn the run's id.
    expect(calls.get('DescribeWorkflowExecution') ?? 0).toBeLessThanOrEqual(1);
  });

  it('a first create asks nothing before it starts: one update-with-start, no describe', async () => {
    calls.clear();
    const created = await client.authorizations.create({ orderId: newOrderId('cost-first'), payer: payer(9).address, amount: '0.01' });
    expect(created.state).toBe('drafted');
    expect(calls.get('ExecuteMultiOperation')).toBe(1);
    expect(calls.get('DescribeWorkflowExecution') ?? 0).toBe(0);
  });

  it('a whole payment (create, sign, capture) is at most 4 workflow tasks and 40 history events, with no other workflow of its own', async () => {
    const p = payer(9);
    const created = await api('POST', '/v1/authorizations', { orderId: newOrderId('cost'), payer: p.address, amount: '0.01' });
    expect(created.status).toBe(201);
    const signed = await api('POST', `/v1/authorizations/${created.body.id}/signature`, { signature: walletSign(created.body.typedData, p.privateKey) });
    expect(signed.status).toBe(200);
    const captured = await api('POST', `/v1/authorizations/${created.body.id}/capture`);
    expect([200, 202]).toContain(captured.status);
    const temporal = await connectTemporal();
    try {
      const { workflowId, runId } = parseResourceId(created.body.id)!;
      const handle = temporal.workflow.getHandle(workflowId, runId);
      // The workflow completes with the capture's outcome.
      let description = await handle.describe();
      for (let i = 0; i < 150 && description.status.name === 'RUNNING'; i++) {
        await sleep(200);
        description = await handle.describe();
      }
      expect(description.status.name).toBe('COMPLETED');
      const events = (await handle.fetchHistory()).events!;
      const count = (type: number) => events.filter((e) => e.eventType === type).length;
      // Create, sign, capture (its precheck and simulation run inside the task), the capture's outcome.
      expect(count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)).toBeLessThanOrEqual(4);
      expect(events.length).toBeLessThanOrEqual(40);
      // At most one memo write and one search-attribute upsert per task (writes coalesced per activation).
      expect(count(EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED)).toBeLessThanOrEqual(count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) * 2);
      // Markers are the three local activities (the draft, the signature check, the capture's
      // precheck and simulation), and no patch marker. No child or external workflow: no nonce
      // claim, no other workflow to hand events to.
      expect(count(EventType.EVENT_TYPE_MARKER_RECORDED)).toBeLessThanOrEqual(3);
      expect(count(EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)).toBe(0);
      expect(count(EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED)).toBe(0);
      // Its events are in its own memo, each once.
      const ids = eventsFromMemo(sealedEntries(description.memo)).map((e) => e.type);
      expect(ids).toEqual(['authorization.drafted', 'authorization.stored', 'authorization.preconfirmed', 'authorization.captured']);
    } finally {
      await temporal.connection.close();
    }
  }, 60_000);
});
