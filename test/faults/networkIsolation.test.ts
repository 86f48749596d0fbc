// Case: each network its own failure domain (issue 35). Two networks; the second's node is down when
// the worker and API start. They start anyway: the first network serves captures, /readyz names the
// down one, and once its node answers the second serves too, with no restart. Then the second's node
// stalls (every call held, as a `kill -STOP`ped node): a create is refused at once with
// chain_unavailable and Retry-After and leaves nothing drafting for ever, no workflow ends FAILED,
// and the same order is created once the node answers; a capture asked during a stall answers
// `capturing` (or a clear code), never the `stored` it left. FAULTS_FULL=1 holds the stall past the
// draft's and the reads' whole retry budgets (~70 s), as the issue's report did.
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthcapError } from '../../domain/errors.js';
import { apiCall, createStored, sign } from './drive.js';
import { FULL, eventually, sleep, startWorld, type World } from './harness.js';

/** How long a refusal may take: the API asks the node (2 s) before it starts anything. */
const PROMPT_MS = 6_000;

describe('each network its own failure domain', () => {
  let world: World;
  let network1: string;
  let network2: string;
  let orders = 0;
  const orderId = (label: string) => `isolation-${label}-${process.pid}-${Date.now()}-${++orders}`;
  const readyz = () => apiCall(world, 'GET', '/readyz');
  /** The order's attempts once none is `drafting` any more (a stalled draft or check ends, never hangs). */
  const attemptsOnceClosed = (order: string) =>
    eventually(
      () => world.client.authorizations.list({ orderId: order }),
      (page) => page.data.length > 0 && page.data.every((a) => a.state !== 'drafting'),
      30_000,
    );

  beforeAll(async () => {
    world = await startWorld({ networks: 2, secondDownAtStart: true, api: true });
    network1 = `eip155:${world.anvil.chainId}`;
    network2 = world.second!.network;
  }, 300_000);
  afterAll(() => world?.stop());

  it('starts with one network down: the other captures, /readyz names the down one, and it serves once its node answers', async () => {
    // Once a worker polls (it started degraded too, rather than exiting).
    const ready = await eventually(readyz, (a) => a?.body?.checks?.worker?.ok === true, 60_000);
    // Ready (a load balancer keeps sending traffic: the first network serves), and `degraded`, naming the down network.
    expect(ready?.status).toBe(200);
    expect(ready?.body.status).toBe('degraded');
    expect(ready?.body.checks.networks[network1].ok).toBe(true);
    expect(ready?.body.checks.networks[network2]).toMatchObject({ ok: false, served: false });

    const id1 = await createStored(world, 0, '0.01', undefined, network1);
    expect((await world.client.authorizations.capture(id1, { waitMs: 60_000 })).authorization.state).toBe('captured');

    // The down network: refused at once, with a code to retry on, nothing started.
    const payer = world.payers[1]!.address;
    const started = Date.now();
    const refused = await apiCall(world, 'POST', '/v1/authorizations', { orderId: orderId('down'), payer, amount: '0.01', network: network2 });
    expect(Date.now() - started).toBeLessThan(PROMPT_MS);
    expect(refused?.status).toBe(503);
    expect(refused?.body.error.code).toBe('chain_unavailable');
    expect(refused?.retryAfterMs).toBeGreaterThan(0);

    // Its node answers: it serves, no restart.
    world.second!.proxy.clear();
    const back = await eventually(readyz, (a) => a?.body.status === 'ready', 60_000);
    expect(back?.body.checks.networks[network2].ok).toBe(true);
    const id2 = await eventually(
      () => createStored(world, 2, '0.01', undefined, network2),
      (id) => typeof id === 'string',
      60_000,
    );
    expect(id2).toBeTypeOf('string');
    expect((await world.client.authorizations.capture(id2, { waitMs: 60_000 })).authorization.state).toBe('captured');
  }, 300_000);

  it('a create while the node is stalled: chain_unavailable with Retry-After at once, nothing drafting for ever, nothing FAILED, the order tries again', async () => {
    const payer = world.payers[3]!.address;
    const order = orderId('stalled');
    const request = { orderId: order, payer, amount: '0.01', network: network2 };
    world.second!.proxy.set('stall', 1, 600_000);
    try {
      const started = Date.now();
      const refused = await apiCall(world, 'POST', '/v1/authorizations', request, { timeoutMs: 60_000 });
      expect(Date.now() - started).toBeLessThan(PROMPT_MS);
      expect(refused?.status).toBe(503);
      expect(refused?.body.error.code).toBe('chain_unavailable');
      expect(refused?.retryAfterMs).toBeGreaterThan(0);

      // The client library asks no node first: the workflow's draft is what must end the attempt,
      // within its own short budget, as `chain_unavailable`, and not as a FAILED workflow.
      const library = Date.now();
      const err = (await world.client.authorizations.create(request).then(
        () => undefined,
        (e: unknown) => e,
      )) as AuthcapError | undefined;
      expect(err?.code).toBe('chain_unavailable');
      expect(Date.now() - library).toBeLessThan(25_000);
      if (FULL) await sleep(70_000);
    } finally {
      world.second!.proxy.clear();
    }

    // The attempt the stall cut off is closed, its record says why: never `drafting` for ever.
    const listed = await attemptsOnceClosed(order);
    expect(listed.data.map((a) => a.state)).toEqual(['rejected']);
    const rejected = await world.client.authorizations.get(listed.data[0]!.id);
    expect(rejected).toMatchObject({ state: 'rejected', lastError: { code: 'chain_unavailable' } });

    // The node answers: the same order is created, and nothing of authcap's ended FAILED.
    const created = await eventually(
      () => world.client.authorizations.create(request),
      (a) => a?.state === 'drafted',
      60_000,
    );
    expect(created?.state).toBe('drafted');
    expect(await failedWorkflows(world)).toEqual([]);
  }, 300_000);

  it("a pre-signed create while the node is stalled: chain_unavailable within the check's short budget, the attempt rejected, nothing FAILED", async () => {
    const p = world.payers[5]!;
    // The second network's token domain, as authcap drafts with it (the draft made while the node answers).
    const probe = await world.client.authorizations.create({ orderId: orderId('presigned-domain'), payer: p.address, amount: '0.01', network: network2 });
    await world.client.authorizations.void(probe.id, { reason: 'only needed the domain' });
    const typedData = probe.typedData!;
    const authorization = { ...typedData.message, nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}` };
    const signature = sign({ ...typedData, message: authorization }, p.privateKey);
    const order = orderId('presigned-stalled');
    world.second!.proxy.set('stall', 1, 600_000);
    try {
      const started = Date.now();
      const err = (await world.client.authorizations
        .create({ orderId: order, network: network2, primaryType: 'ReceiveWithAuthorization', authorization, signature })
        .then(
          () => undefined,
          (e: unknown) => e,
        )) as AuthcapError | undefined;
      expect(err?.code, err?.message).toBe('chain_unavailable');
      expect(Date.now() - started).toBeLessThan(25_000);
    } finally {
      world.second!.proxy.clear();
    }
    const listed = await attemptsOnceClosed(order);
    expect(listed.data.map((a) => a.state)).toEqual(['rejected']);
    expect(await failedWorkflows(world)).toEqual([]);
  }, 300_000);

  it('a capture while the node is stalled answers capturing (or a clear code), and captures once the node answers', async () => {
    const id = await createStored(world, 4, '0.01', undefined, network2);
    world.second!.proxy.set('stall', 1, 600_000);
    let answer: Awaited<ReturnType<typeof apiCall<any>>>;
    try {
      answer = await apiCall(world, 'POST', `/v1/authorizations/${encodeURIComponent(id)}/capture`, {}, { timeoutMs: 60_000 });
    } finally {
      world.second!.proxy.clear();
    }
    if (answer?.status === 202) expect(answer.body.state).toBe('capturing');
    else {
      expect(answer?.status).toBe(503);
      expect(answer?.body.error.code).toBe('chain_unavailable');
    }
    // Once the node answers the capture goes on (or, its reads given up, the order service asks again).
    const after = await eventually(
      () => world.client.authorizations.get(id),
      (a) => a.state === 'captured' || (a.state === 'stored' && a.lastError !== null),
      120_000,
    );
    if (after.state === 'stored') await world.client.authorizations.capture(id, { waitMs: 60_000 });
    const final = await eventually(
      () => world.client.authorizations.get(id),
      (a) => a.state === 'captured',
      60_000,
    );
    expect(final.state).toBe('captured');
    expect(await failedWorkflows(world)).toEqual([]);
  }, 300_000);
});

/** Every FAILED workflow in the world's namespace (type and id): authcap's must never end so on a node outage. */
async function failedWorkflows(world: World): Promise<string[]> {
  const connection = await Connection.connect({ address: world.temporal.address });
  try {
    const client = new Client({ connection, namespace: world.temporal.namespace });
    const failed: string[] = [];
    for await (const run of client.workflow.list({ query: `ExecutionStatus = 'Failed'` })) failed.push(`${run.type} ${run.workflowId}`);
    return failed;
  } finally {
    await connection.close();
  }
}
