// What an order service does in the fault cases: create, have the payer sign, capture; all through
// the typed client library (the API process is exercised by its own case).
import { SignTypedDataVersion, signTypedData } from '@metamask/eth-sig-util';
import type { Hex } from 'viem';
import { eventually, kill, sleep, type World } from './harness.js';

let counter = 0;

export function sign(typedData: unknown, privateKey: Hex): Hex {
  return signTypedData({ privateKey: Buffer.from(privateKey.slice(2), 'hex'), data: typedData as never, version: SignTypedDataVersion.V4 }) as Hex;
}

export async function createStored(world: World, i: number, amount = '0.01', validForSeconds?: number): Promise<string> {
  const p = world.payers[i % world.payers.length]!;
  counter += 1;
  const drafted = await world.client.createAuthorization({
    orderId: `fault-${process.pid}-${Date.now()}-${counter}`,
    payer: p.address,
    amount,
    validForSeconds,
  });
  const stored = await world.client.submitSignature(drafted.id, sign(drafted.typedData, p.privateKey));
  return stored.id;
}

/** Fires a capture and forgets its answer: the audit reads the outcome from authcap and the chain. */
export function captureInBackground(world: World, id: string): Promise<unknown> {
  return world.client.capture(id, { waitMs: 60_000 }).catch((err: unknown) => err);
}

/**
 * After a fault: captures cut off by it go on in their workflows, and the ones left stored are
 * captured again, as an order service would. Resolves with each authorization once it is captured
 * (or as it stands when `timeoutMs` runs out).
 */
export async function settleCaptures(world: World, ids: string[], captures: Promise<unknown>[], timeoutMs: number) {
  await Promise.all(captures);
  for (const id of ids) {
    const a = await world.client.getAuthorization(id);
    if (a.state === 'stored') await captureInBackground(world, id);
  }
  return Promise.all(
    ids.map((id) =>
      eventually(
        () => world.client.getAuthorization(id),
        (a) => a.state === 'captured',
        timeoutMs,
      ),
    ),
  );
}

/** SIGKILLs the first worker `times` times at random moments, starting a new one after each. */
export async function killWorkerRepeatedly(world: World, times: number, maxDelayMs: number): Promise<void> {
  for (let k = 0; k < times; k += 1) {
    await sleep(150 + Math.floor(Math.random() * maxDelayMs));
    await kill(world.workers[0]!);
    world.workers.shift();
    world.workers.unshift(await world.startWorker());
  }
}
