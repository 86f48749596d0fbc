// What an order service does in the fault cases: create, have the payer sign, capture; all through
// the typed client library (the API process is exercised by its own case).
import { SignTypedDataVersion, signTypedData } from '@metamask/eth-sig-util';
import type { Hex } from 'viem';
import type { World } from './harness.js';

let counter = 0;

export function sign(typedData: unknown, privateKey: Hex): Hex {
  return signTypedData({ privateKey: Buffer.from(privateKey.slice(2), 'hex'), data: typedData as never, version: SignTypedDataVersion.V4 }) as Hex;
}

export async function createStored(world: World, i: number, amount = '0.01', validForSeconds?: number): Promise<string> {
  const p = world.payers[i % world.payers.length]!;
  counter += 1;
  const drafted = await world.client.createAuthorization({ orderId: `fault-${process.pid}-${Date.now()}-${counter}`, payer: p.address, amount, validForSeconds });
  const stored = await world.client.submitSignature(drafted.id, sign(drafted.typedData, p.privateKey));
  return stored.id;
}

/** Fires a capture and forgets its answer: the audit reads the outcome from authcap and the chain. */
export function captureInBackground(world: World, id: string): Promise<unknown> {
  return world.client.capture(id, { waitMs: 60_000 }).catch((err: unknown) => err);
}
