// One held payment, two ways: through authcap's HTTP API as an order service drives it, and as the floor,
// bare viem calls on the same escrow and collector from the merchant key (the operator).
//   authcap  POST /v1/authorizations {amount: 10.00, hold: true} → POST …/signature (answers once held,
//            PaymentAuthorized at depth) → POST …/capture {3.00} and {2.50}, each with its own
//            Idempotency-Key (200 once its PaymentCaptured is at depth) → POST …/void, then GET
//            ?wait=30&state=held until the state leaves `held` (PaymentVoided at depth)
//   floor    the payer signs the collector's ReceiveWithAuthorization of the same kind of terms
//            (domain/hold.ts holdTerms, domain/escrow.ts holdAuthorizationMessage); the merchant key sends
//            escrow.authorize, capture, capture, void, each polled every 20 ms to its receipt and the
//            depth (test/bench/baselines/bareCapture.ts untilSettled). No checks, no durability.
// Each records its steps' wall times, so what the chain and Temporal did can be put on each step.
import { randomUUID } from 'node:crypto';
import { SignTypedDataVersion, signTypedData } from '@metamask/eth-sig-util';
import { parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { authorizationTypes, type TokenDomain } from '../../domain/eip3009.js';
import { holdAuthorizationMessage, type EscrowAddresses } from '../../domain/escrow.js';
import { escrowAbi } from '../../domain/escrowAbi.js';
import { holdTerms } from '../../domain/hold.js';
import type { AuthcapApi, Payer } from './authcapFlows.js';
import { baselineClients, untilSettled } from './baselines/bareCapture.js';

/** What each held payment does, as test/integration/holds.test.ts does it. */
export const HOLD = { amount: '10.00', parts: ['3.00', '2.50'], rest: '4.5' } as const;

export const HELD_STEPS = ['create', 'sign', 'capture1', 'capture2', 'void'] as const;
export type HeldStep = (typeof HELD_STEPS)[number];
export const FLOOR_STEPS = ['authorize', 'capture1', 'capture2', 'void'] as const;
export type FloorStep = (typeof FLOOR_STEPS)[number];
export const PLAIN_STEPS = ['create', 'sign', 'capture'] as const;
export type PlainStep = (typeof PLAIN_STEPS)[number];

/** The escrow transactions of one held payment, in order. */
export interface HoldHashes {
  authorize: Hex;
  capture1: Hex;
  capture2: Hex;
  void: Hex;
}

export interface HeldTiming {
  id: string;
  /** ms of each step, request sent → its answer (the void: → the state left `held`). */
  ms: Record<HeldStep, number>;
  totalMs: number;
  /** Wall clock (Date.now()) at each step's start, then at the end: the windows Temporal's events are put in. */
  marks: number[];
  paymentInfoHash: Hex;
  operator: Address;
  hashes: HoldHashes;
  /** The API's answers by step, e.g. { 'sign 200': 1 }: a 202 means the caller waited past the API's own wait. */
  answers: Record<string, number>;
}

export interface PlainTiming {
  id: string;
  ms: Record<PlainStep, number>;
  totalMs: number;
  marks: number[];
  captureHash: Hex;
}

export interface FloorTiming {
  ms: Record<FloorStep, number>;
  totalMs: number;
  hashes: HoldHashes;
  paymentInfoHash?: Hex;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ENDED = ['canceled', 'voided', 'expired', 'rejected'];

/** create → sign → capture 3.00 → capture 2.50 → void, through the API; throws on anything unexpected. */
export async function heldPayment(api: AuthcapApi, payer: Payer, label: string): Promise<HeldTiming> {
  const marks: number[] = [];
  const ms = {} as Record<HeldStep, number>;
  const answers: Record<string, number> = {};
  const answered = (step: string, status: number) => (answers[`${step} ${status}`] = (answers[`${step} ${status}`] ?? 0) + 1);
  const started = performance.now();
  let t = started;
  const step = (name: HeldStep) => {
    const now = performance.now();
    ms[name] = now - t;
    t = now;
    marks.push(Date.now());
  };
  marks.push(Date.now());

  const orderId = `${label}-${randomUUID()}`;
  const created = await api.call(
    'POST',
    '/v1/authorizations',
    { orderId, payer: payer.address, amount: HOLD.amount, hold: true },
    { 'idempotency-key': orderId },
  );
  if (created.status !== 201 || created.body.state !== 'drafted') throw new Error(`hold create answered ${created.status}: ${JSON.stringify(created.body)}`);
  answered('create', created.status);
  const id: string = created.body.id;
  step('create');

  const signature = signTypedData({
    privateKey: Buffer.from(payer.privateKey.slice(2), 'hex'),
    data: created.body.typedData as never,
    version: SignTypedDataVersion.V4,
  });
  let res: { status: number; body: any } = await api.call('POST', `/v1/authorizations/${id}/signature`, { signature });
  if (res.status !== 200 && res.status !== 202) throw new Error(`hold signature of ${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
  answered('sign', res.status);
  res = await untilStateLeaves(api, id, res.body, ['drafted', 'holding']);
  if (res.body.state !== 'held') throw new Error(`hold ${id} is ${res.body.state} after signing: ${JSON.stringify(res.body.lastError)}`);
  step('sign');

  for (const [i, amount] of HOLD.parts.entries()) {
    const key = `${id}-part-${i + 1}`;
    for (;;) {
      res = await api.call('POST', `/v1/authorizations/${id}/capture`, { amount }, { 'idempotency-key': key });
      if (res.status !== 200 && res.status !== 202) throw new Error(`capture ${amount} of ${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
      answered(`capture${i + 1}`, res.status);
      const part = res.body.captures?.[i];
      if (part?.status === 'failed') throw new Error(`capture ${amount} of ${id} failed: ${JSON.stringify(part.failure)}`);
      if (res.status === 200 && part?.status === 'succeeded') break;
      // Past the API's own wait: the same request with the same key again, as docs/holds.md says.
      await sleep(250);
    }
    step(i === 0 ? 'capture1' : 'capture2');
  }

  res = await api.call('POST', `/v1/authorizations/${id}/void`, { reason: 'bench: the rest' });
  if (res.status !== 200 && res.status !== 202) throw new Error(`void of ${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
  answered('void', res.status);
  res = await untilStateLeaves(api, id, res.body, ['held']);
  const hold = res.body.hold;
  if (res.body.state !== 'captured' || hold?.release?.kind !== 'void' || hold.release.amount !== HOLD.rest)
    throw new Error(`hold ${id} after its void: ${res.body.state}, release ${JSON.stringify(hold?.release)}`);
  step('void');

  const captures = res.body.captures as { transactionHash: Hex }[];
  return {
    id,
    ms,
    totalMs: performance.now() - started,
    marks,
    paymentInfoHash: hold.paymentInfoHash,
    operator: hold.terms.operator,
    hashes: {
      authorize: hold.authorizeTransactionHash,
      capture1: captures[0]!.transactionHash,
      capture2: captures[1]!.transactionHash,
      void: hold.release.transactionHash,
    },
    answers,
  };
}

/** Long-polls GET ?wait=30&state=<current> while the state is one of `while`. */
async function untilStateLeaves(api: AuthcapApi, id: string, body: any, whileIn: string[]): Promise<{ status: number; body: any }> {
  let res: { status: number; body: any } = { status: 200, body };
  while (whileIn.includes(res.body.state)) {
    if (ENDED.includes(res.body.state)) break;
    res = await api.call('GET', `/v1/authorizations/${id}?wait=30&state=${res.body.state}`);
    if (res.status !== 200) throw new Error(`wait on ${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  return res;
}

/** A plain payment the bench's way (test/bench/authcapFlows.ts), its steps' wall times recorded. */
export async function plainPayment(api: AuthcapApi, payer: Payer, label: string): Promise<PlainTiming> {
  const marks = [Date.now()];
  const started = performance.now();
  const created = await api.create(payer, label);
  const c = performance.now();
  marks.push(Date.now());
  await api.store(payer, created);
  const s = performance.now();
  marks.push(Date.now());
  const captured = await api.capture(created.id);
  const e = performance.now();
  marks.push(Date.now());
  return {
    id: created.id,
    ms: { create: c - started, sign: s - c, capture: e - s },
    totalMs: e - started,
    marks,
    captureHash: captured.body.capture.transactionHash,
  };
}

export interface HoldFloorSetup {
  rpcUrl: string;
  chainId: number;
  token: { address: Address; decimals: number };
  domain: TokenDomain;
  escrow: EscrowAddresses;
  /** The merchant key: the payments' operator and receiver, as authcap's holds have it. */
  operatorKey: Hex;
  confirmations: number;
}

export interface HoldFloor {
  address: Address;
  heldPayment(payer: Payer): Promise<FloorTiming>;
  rpcCalls(): Record<string, number>;
}

export function createHoldFloor(setup: HoldFloorSetup): HoldFloor {
  const { metrics, account, publicClient, wallet } = baselineClients(setup.rpcUrl, setup.chainId, setup.operatorKey);
  const units = (text: string) => parseUnits(text, setup.token.decimals);

  async function heldPayment(payer: Payer): Promise<FloorTiming> {
    const started = performance.now();
    const ms = {} as Record<FloorStep, number>;
    const hashes = {} as HoldHashes;
    let t = started;
    const send = async (name: FloorStep, hash: Promise<Hex>) => {
      hashes[name] = await hash;
      await untilSettled(publicClient, hashes[name], setup.confirmations, () => undefined);
      const now = performance.now();
      ms[name] = now - t;
      t = now;
    };
    // The same terms authcap drafts (operator and receiver the merchant key, no fee, its windows).
    const terms = holdTerms({
      operator: account.address,
      receiver: account.address,
      payer: payer.address,
      token: setup.token.address,
      amount: units(HOLD.amount),
      authorizeBy: Math.floor(Date.now() / 1000) + 600,
      authorizationId: `floor-${randomUUID()}`,
    });
    const message = holdAuthorizationMessage(terms, setup.chainId, setup.escrow);
    const signature = await privateKeyToAccount(payer.privateKey).signTypedData({
      domain: setup.domain,
      types: { ReceiveWithAuthorization: authorizationTypes.ReceiveWithAuthorization },
      primaryType: 'ReceiveWithAuthorization',
      message: { ...message, value: BigInt(message.value), validAfter: BigInt(message.validAfter), validBefore: BigInt(message.validBefore) },
    });
    const escrow = setup.escrow.escrow;
    await send(
      'authorize',
      wallet.writeContract({
        address: escrow,
        abi: escrowAbi,
        functionName: 'authorize',
        args: [terms, terms.maxAmount, setup.escrow.paymentCollector, signature],
      }),
    );
    for (const [i, part] of HOLD.parts.entries()) {
      await send(
        i === 0 ? 'capture1' : 'capture2',
        wallet.writeContract({
          address: escrow,
          abi: escrowAbi,
          functionName: 'capture',
          args: [terms, units(part), 0, '0x0000000000000000000000000000000000000000'],
        }),
      );
    }
    await send('void', wallet.writeContract({ address: escrow, abi: escrowAbi, functionName: 'void', args: [terms] }));
    return { ms, totalMs: performance.now() - started, hashes };
  }

  return { address: account.address, heldPayment, rpcCalls: () => metrics.snapshot().byMethod };
}
