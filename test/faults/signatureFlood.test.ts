// Case: a checkout link's holder floods the authorization with wrong signatures, then the worker is
// SIGKILLed and restarted (the probe's finding: the history grew until replay outlasted the task
// timeout and the order was bricked). The API has the chain judge each signature before it is sent,
// so every refusal is 422 invalid_signature and none reaches the workflow (no update, no budget
// spent); the history grows by the stack's own reconciliation ticks alone, the new worker replays it
// at once, and the payer's real signature and the capture go through within seconds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { parseResourceId } from '../../domain/ids.js';
import { loadTemporalSettings } from '../../runtime/temporal.js';
import { acceptedUpdates } from '../support/signatureFlood.js';
import { audit } from './audit.js';
import { sign } from './drive.js';
import { eventually, kill, startWorld, type World } from './harness.js';

const ATTEMPTS = 1_000;
/** Events the 2 s reconciliation ticks of a minute or two may add: the flood itself adds none. */
const HISTORY_BOUND = 300;

describe('a checkout link flooded with wrong signatures, then a worker restart', () => {
  let world: World;
  beforeAll(async () => {
    // The public limit is per client address; the flood here comes from one, so lift it: every attempt must reach authcap.
    world = await startWorld({ api: true, env: { AUTHCAP_PUBLIC_RATE_LIMIT: '2000' } });
  }, 240_000);
  afterAll(() => world?.stop());

  it(`${ATTEMPTS} refused attempts leave a bounded history; after a worker kill the payer signs and the capture completes`, async () => {
    const before = await world.publicClient.getTransactionCount({ address: world.merchant.address });
    const payer = world.payers[0]!;
    const stranger = world.payers[1]!;
    const created = await fetch(`${world.apiUrl}/v1/authorizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${world.apiKey}` },
      body: JSON.stringify({ orderId: `flood-${Date.now()}`, payer: payer.address, amount: '1.00' }),
    }).then((res) => res.json() as Promise<{ id: string; typedData: unknown; checkoutUrl: string }>);
    const link = new URL(created.checkoutUrl.replace(/^https?:\/\/[^/]+/, world.apiUrl!));
    const signatureUrl = `${link.origin}${link.pathname}/signature${link.search}`;
    const postSignature = (signature: string) =>
      fetch(signatureUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ signature }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { state?: string; error?: { code: string } } }));

    const temporal = new Client({
      connection: await Connection.connect({ address: world.temporal.address }),
      namespace: world.temporal.namespace,
      dataConverter: loadTemporalSettings().dataConverter,
    });
    const { workflowId } = parseResourceId(created.id)!;
    const historyLength = async () => (await temporal.workflow.getHandle(workflowId).fetchHistory()).events!.length;
    const startLength = await historyLength();
    const startUpdates = await acceptedUpdates(temporal, created.id);

    const wrong = sign(created.typedData, stranger.privateKey);
    const statuses = new Map<string, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < ATTEMPTS) {
          next += 1;
          const { status, body } = await postSignature(wrong);
          const key = `${status} ${body.error?.code}`;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
        }
      }),
    );
    // Every attempt judged and refused 422 invalid_signature: no 5xx, no too_many_attempts (no budget
    // was spent), no invalid_state (nothing reached the workflow to keep it busy).
    expect(Object.fromEntries(statuses)).toEqual({ '422 invalid_signature': ATTEMPTS });
    expect(await acceptedUpdates(temporal, created.id)).toBe(startUpdates);
    const floodedLength = await historyLength();
    expect(floodedLength - startLength).toBeLessThan(HISTORY_BOUND);

    // An ordinary worker restart: the new worker replays the (short) history and carries on.
    await kill(world.workers[0]!);
    world.workers.shift();
    world.workers.unshift(await world.startWorker());

    // "Within seconds": each step is given the wait an order service would give it, no more.
    const signed = await eventually(
      () => postSignature(sign(created.typedData, payer.privateKey)),
      (r) => r.status === 200,
      30_000,
    );
    expect(signed.body.state).toBe('stored');
    expect(await acceptedUpdates(temporal, created.id)).toBe(startUpdates + 1);
    const captured = await world.client.authorizations.capture(created.id, { waitMs: 30_000 });
    expect(captured.authorization.state).toBe('captured');

    const result = await audit(world, [created.id], { caseName: 'signature flood then worker restart', merchantTxBefore: before });
    expect(result.details.filter((d) => !d.startsWith('note:'))).toEqual([]);
    expect(result).toMatchObject({ lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 });
    await temporal.connection.close();
  }, 600_000);
});
