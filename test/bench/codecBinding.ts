// What binding each payload to its place costs (runtime/codec.ts): the payload codec sealing and
// opening a capture-sized payload with and without a serialization context, on this machine. The
// place adds AES-GCM associated data (a few bytes to authenticate) and rides beside the ciphertext
// in the payload's metadata (the bytes printed below, per payload, in history).
//   npx tsx test/bench/codecBinding.ts
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type SerializationContext } from '@temporalio/common';
import { EncryptionCodec, parseCodecKeys } from '../../runtime/codec.js';

const codec = new EncryptionCodec(parseCodecKeys(`k1:${randomBytes(32).toString('base64')}`));
// A capture's request as a follower receives it: the authorization, its signature, the reply address.
const request = defaultPayloadConverter.toPayload({
  requestId: `capture:0x${'ab'.repeat(20)}:0x${'cd'.repeat(32)}:1`,
  replyTo: { workflowId: 'authorization-order-000123', runId: '01a21f3d-da6a-7bee-9586-ba8e580d3688' },
  call: {
    kind: 'capture',
    primaryType: 'ReceiveWithAuthorization',
    authorization: {
      from: `0x${'ab'.repeat(20)}`,
      to: `0x${'ef'.repeat(20)}`,
      value: '5000000',
      validAfter: '0',
      validBefore: '1795820477',
      nonce: `0x${'cd'.repeat(32)}`,
    },
    signature: `0x${'11'.repeat(65)}`,
  },
})!;
const context: SerializationContext = { type: 'activity', namespace: 'default', workflowId: 'authorization-order-000123', activityId: '12', isLocal: false };

async function run(label: string, ctx: SerializationContext | undefined, rounds: number): Promise<{ us: number; bytes: number }> {
  const [sample] = await codec.encode([request], ctx);
  const bytes = Object.entries(sample!.metadata ?? {}).reduce((n, [k, v]) => n + k.length + v.length, 0) + (sample!.data?.length ?? 0);
  const started = process.cpuUsage();
  for (let i = 0; i < rounds; i++) {
    const [sealed] = await codec.encode([request], ctx);
    await codec.decode([sealed!], ctx);
  }
  const used = process.cpuUsage(started);
  const us = (used.user + used.system) / rounds;
  console.log(`${label.padEnd(28)} ${us.toFixed(1).padStart(6)} µs CPU per seal+open, ${bytes} bytes per payload`);
  return { us, bytes };
}

const rounds = 20_000;
await run('warm-up', context, 2_000);
const unbound = await run('sealed for no place', undefined, rounds);
const bound = await run('sealed for its activity', context, rounds);
console.log(`binding: +${(bound.us - unbound.us).toFixed(1)} µs CPU and +${bound.bytes - unbound.bytes} bytes per payload`);
