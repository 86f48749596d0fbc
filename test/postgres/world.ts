// The production shape for the postgres suite: the Temporal server on PostgreSQL (SQL visibility, 4
// shards), two worker processes, two API processes, anvil with our token; HTTP calls spread over
// both APIs as a load balancer would.
import { Client, Connection } from '@temporalio/client';
import type { Hex } from 'viem';
import { connectionTls } from '../../devstack/temporalTls.js';
import { dataConverterFromEnv } from '../../runtime/temporal.js';
import { startWorld, type World } from '../faults/harness.js';
import { sign } from '../faults/drive.js';

export function startProductionWorld(): Promise<World> {
  return startWorld({ temporal: 'postgres', workers: 2, apis: 2, validitySeconds: 600 });
}

let turn = 0;

/** One HTTP call to the next API process in turn (or to the one named); its headers too (Idempotent-Replayed). */
export async function call<T = any>(
  world: World,
  method: string,
  path: string,
  body?: unknown,
  options: { api?: number; idempotencyKey?: string } = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const url = world.apiUrls[options.api ?? turn++ % world.apiUrls.length]!;
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${world.apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T, headers: res.headers };
}

let orders = 0;
export const newOrder = (label: string) => `pg-${label}-${process.pid}-${Date.now()}-${++orders}`;

/** Create and sign through the APIs (alternating): the authorization's id, stored. */
export async function storedViaApi(world: World, payerIndex: number, amount = '0.01', orderId = newOrder('stored')): Promise<{ id: string; orderId: string }> {
  const payer = world.payers[payerIndex % world.payers.length]!;
  const created = await call(world, 'POST', '/v1/authorizations', { orderId, payer: payer.address, amount });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
  const signed = await call(world, 'POST', `/v1/authorizations/${created.body.id}/signature`, {
    signature: sign(created.body.typedData, payer.privateKey as Hex),
  });
  if (signed.status !== 200) throw new Error(`sign: ${signed.status} ${JSON.stringify(signed.body)}`);
  return { id: created.body.id, orderId };
}

/** A Temporal client as an operator has it on this shape: the CLI's certificate and the payload keys. */
export async function operatorTemporal(world: World): Promise<{ connection: Connection; temporal: Client }> {
  const connection = await Connection.connect({ address: world.temporal.address, tls: connectionTls(world.cluster!.tls, world.cluster!.tls.clients.cli) });
  return { connection, temporal: new Client({ connection, namespace: world.temporal.namespace, dataConverter: dataConverterFromEnv() }) };
}
