// Helpers for the refund and partial-capture suites (test/integration/refunds.test.ts,
// partialCapture.test.ts): one "world" is an API, a chain and a merchant key; the same scenario runs
// on the suite's shared stack (its merchant key shared with every file capturing in parallel) and on
// an isolated chain with a worker and an API of the file's own (its merchant key the file's alone,
// so balances and transaction counts are exact there, and the token may be paused or the merchant
// blacklisted without breaking other files).
//
// Money is checked two ways. The payer is always a fresh key of the test's own, so its balance is
// exact. The merchant's balance is read at pinned blocks: it must have moved by exactly the sum of
// its Transfer logs in the window (nothing else moved it), its logs with this payer must net to what
// authcap says, and where the merchant is exclusive the balance itself must have moved by exactly that.
import { randomBytes, randomUUID } from 'node:crypto';
import { expect, vi } from 'vitest';
import type { Client } from '@temporalio/client';
import { decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
import { decodeFunctionData, parseEventLogs, parseUnits, toHex, type Address, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AuthcapClient } from '../../client/authcapClient.js';
import type { AuthorizationResource } from '../../domain/authorization.js';
import { refundNonce } from '../../activities/refund.js';
import { parseRefundId, type Refund } from '../../domain/refunds.js';
import { sealedEntries } from '../../domain/sealed.js';
import { authorizationTypes } from '../../domain/eip3009.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { chain, dev, newOrderId, readApiResult, walletSign, type ApiResult } from './api.js';
import { startIsolatedChain, type IsolatedChain } from './isolatedChain.js';
import { asTokenOwner, sleep, type DemoKey } from './lifecycle.js';
import { startOwnApi, type OwnApi } from './ownApi.js';

export type { Refund };

/** Every field of the refund object in the spec (issue 18), and no other. */
export const REFUND_FIELDS = [
  'amount',
  'authorizationId',
  'createdAt',
  'failure',
  'id',
  'lastError',
  'orderId',
  'reason',
  'state',
  'succeededAt',
  'transactionHash',
];

/** A refund's network and token: on every refund of an authorization that names its chain (all since issue 27). */
export const REFUND_CHAIN_FIELDS = ['network', 'token'];

/** The refund's fields: the spec's, and its network and token together or neither (an API given no deployment). */
export function refundFieldsOf(r: object): string[] {
  const keys = Object.keys(r).sort();
  const chain = keys.filter((k) => REFUND_CHAIN_FIELDS.includes(k));
  return chain.length === REFUND_CHAIN_FIELDS.length ? keys.filter((k) => !REFUND_CHAIN_FIELDS.includes(k)) : keys;
}

/** The refund validity the product uses by default (AUTHCAP_REFUND_VALIDITY_SECONDS). */
export const DEFAULT_REFUND_VALIDITY_SECONDS = 300n;

export type OwnerFunction = 'mint' | 'blacklist' | 'unBlacklist' | 'pause' | 'unpause' | 'transferWithAuthorization';

export interface World {
  name: 'shared' | 'isolated';
  url: string;
  /** An order-service key of this API. */
  key: string;
  publicClient: PublicClient;
  tokenAddress: Address;
  /** The merchant key new authorizations pay (the suite runs with one key per stack). */
  merchant: Address;
  /** True when no other test file sends through this merchant key: its balance and counts are exact. */
  exclusiveMerchant: boolean;
  /** One transaction from the token owner (mint, blacklist, pause, …), waited for; fails on revert. */
  ownerWrite(functionName: OwnerFunction, args: readonly unknown[]): Promise<TransactionReceipt>;
}

export interface IsolatedWorld extends World {
  chain: IsolatedChain;
  own: OwnApi;
  stop(): Promise<void>;
}

export function sharedWorld(): World {
  const d = dev();
  return {
    name: 'shared',
    url: d.apiUrl,
    key: d.apiKey,
    publicClient: chain() as unknown as PublicClient,
    tokenAddress: d.tokenAddress,
    merchant: d.merchantAddress,
    exclusiveMerchant: false,
    ownerWrite: (functionName, args) => asTokenOwner((w) => w.writeContract({ address: d.tokenAddress, abi: tokenAbi, functionName, args } as never)),
  };
}

/** An anvil, a worker (its own task queue and merchant key) and an API of this test file's own, on the suite's Temporal. */
export async function startIsolatedWorld(label: string, options: Parameters<typeof startIsolatedChain>[0] = {}): Promise<IsolatedWorld> {
  const isolated = await startIsolatedChain(options);
  let own: OwnApi;
  try {
    own = await startOwnApi(label, { rpcUrl: isolated.anvil.rpcUrl }, isolated.taskQueue);
  } catch (err) {
    await isolated.stop();
    throw err;
  }
  let queue: Promise<unknown> = Promise.resolve();
  const ownerWrite = (functionName: OwnerFunction, args: readonly unknown[]): Promise<TransactionReceipt> => {
    const run = async () => {
      const wallet = isolated.ownerWallet;
      const hash = await wallet.writeContract({
        address: isolated.tokenAddress,
        abi: tokenAbi,
        functionName,
        args,
        account: wallet.account!,
        chain: undefined,
      } as never);
      const receipt = await isolated.publicClient.waitForTransactionReceipt({ hash, timeout: 15_000 });
      if (receipt.status !== 'success') throw new Error(`owner ${functionName} ${hash} reverted`);
      return receipt;
    };
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
  };
  return {
    name: 'isolated',
    url: own.url,
    key: own.key,
    publicClient: isolated.publicClient as unknown as PublicClient,
    tokenAddress: isolated.tokenAddress,
    merchant: isolated.merchant.address,
    exclusiveMerchant: true,
    ownerWrite,
    chain: isolated,
    own,
    async stop() {
      await own.close().catch(() => undefined);
      await isolated.stop();
    },
  };
}

// --- HTTP ----------------------------------------------------------------------------------------

export interface CallOptions {
  /** Another key than the world's order-service key; null sends none. */
  key?: string | null;
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

/** One HTTP call to the world's API. `body` undefined sends no body at all (read as `{}` by the API). */
export async function call<T = any>(world: World, method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<ApiResult<T>> {
  const key = options.key === undefined ? world.key : options.key;
  const headers: Record<string, string> = {
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(key ? { authorization: `Bearer ${key}` } : {}),
    ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
    ...options.headers,
  };
  const res = await fetch(`${world.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return readApiResult<T>(res);
}

export const tokens = (amount: string) => parseUnits(amount, 6);

/** A payer of the test's own (a fresh key, minted `funding`), so its balance is exact. */
export async function newPayer(world: World, funding = tokens('100')): Promise<DemoKey> {
  const privateKey = generatePrivateKey();
  const { address } = privateKeyToAccount(privateKey);
  await world.ownerWrite('mint', [address, funding]);
  return { address, privateKey };
}

export async function getAuthorizationIn(world: World, id: string): Promise<AuthorizationResource> {
  const res = await call(world, 'GET', `/v1/authorizations/${id}`);
  expect(res.status, `GET ${id}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

export async function draftIn(world: World, p: DemoKey, amount: string, orderId = newOrderId('refund')): Promise<AuthorizationResource> {
  const res = await call(world, 'POST', '/v1/authorizations', { orderId, payer: p.address, amount });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.state).toBe('drafted');
  return res.body;
}

export async function storedIn(world: World, p: DemoKey, amount: string, orderId?: string): Promise<AuthorizationResource> {
  const drafted = await draftIn(world, p, amount, orderId);
  const res = await call(world, 'POST', `/v1/authorizations/${drafted.id}/signature`, { signature: walletSign(drafted.typedData, p.privateKey) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.state).toBe('stored');
  return res.body;
}

/**
 * Waits as a caller would: `GET ?wait=30&state=<from>` until the state is no longer `from` (bounded).
 */
export async function awaitStateChange(world: World, id: string, from: string, timeoutMs = 90_000): Promise<AuthorizationResource> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(world, 'GET', `/v1/authorizations/${id}?wait=30&state=${from}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.body.state !== from) return res.body;
    if (Date.now() > deadline) throw new Error(`${id} still ${from} after ${timeoutMs} ms`);
  }
}

/**
 * POST …/capture (with `body`, e.g. `{amount: "15"}`), expecting 200 captured or 202 capturing, then
 * waits for the final resource. Returns both the answer and the settled resource.
 */
export async function captureIn(world: World, id: string, body?: unknown): Promise<{ answer: ApiResult; final: AuthorizationResource }> {
  const answer = await call(world, 'POST', `/v1/authorizations/${id}/capture`, body);
  expect([200, 202], JSON.stringify(answer.body)).toContain(answer.status);
  if (answer.status === 200) expect(answer.body.state).toBe('captured');
  else expect(answer.body.state).toBe('capturing');
  const final = answer.status === 200 ? answer.body : await awaitStateChange(world, id, 'capturing');
  expect(final.state, JSON.stringify(final.lastError)).toBe('captured');
  return { answer, final };
}

/** A stored authorization of `amount` captured in full: the final resource. */
export async function capturedIn(world: World, p: DemoKey, amount: string): Promise<AuthorizationResource> {
  const s = await storedIn(world, p, amount);
  return (await captureIn(world, s.id)).final;
}

// --- refunds -------------------------------------------------------------------------------------

export function postRefund(world: World, authorizationId: string, body?: unknown, options: CallOptions = {}): Promise<ApiResult> {
  return call(world, 'POST', `/v1/authorizations/${authorizationId}/refunds`, body, options);
}

/** GET /v1/refunds/{id}; told "retry shortly" (503, or 429 while a burst holds its refunds workflow), it retries for a while, as the API asks callers to. */
export async function getRefundIn(world: World, refundId: string, retryForMs = 30_000): Promise<Refund> {
  const until = Date.now() + retryForMs;
  for (;;) {
    const res = await call(world, 'GET', `/v1/refunds/${refundId}`);
    if ((res.status === 503 || res.status === 429) && Date.now() < until) {
      await sleep(1_000);
      continue;
    }
    expect(res.status, `GET /v1/refunds/${refundId}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body;
  }
}

export async function listRefundsIn(world: World, authorizationId: string): Promise<Refund[]> {
  const res = await call(world, 'GET', `/v1/authorizations/${authorizationId}/refunds`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(Object.keys(res.body)).toEqual(['data']);
  expect(Array.isArray(res.body.data)).toBe(true);
  return res.body.data;
}

/** Follows a pending refund with GET /v1/refunds/{id}, as a caller told 202 would, until it is final (bounded). */
export async function awaitRefund(world: World, refundId: string, timeoutMs = 90_000): Promise<Refund> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const refund = await getRefundIn(world, refundId, Math.max(0, deadline - Date.now()));
    if (refund.state !== 'pending') return refund;
    if (Date.now() > deadline) throw new Error(`refund ${refundId} still pending after ${timeoutMs} ms`);
    await sleep(250);
  }
}

/**
 * The answer to a refund request that was accepted: 201 with a final refund (and then GET reads the
 * same), or 202 with `pending` (then followed to its end). Returns the final refund.
 */
export async function refundOutcome(world: World, res: ApiResult): Promise<Refund> {
  expect([201, 202], JSON.stringify(res.body)).toContain(res.status);
  if (res.status === 201) {
    expect(['succeeded', 'failed']).toContain(res.body.state);
    expect(await getRefundIn(world, res.body.id), 'GET /v1/refunds/{id} after a final 201').toEqual(res.body);
    return res.body;
  }
  expect(res.body.state).toBe('pending');
  expectRefundShape(res.body, { state: 'pending' });
  return awaitRefund(world, res.body.id);
}

/** POST …/refunds and follow it to its end. */
export async function refund(world: World, authorizationId: string, body?: unknown, options: CallOptions = {}): Promise<Refund> {
  return refundOutcome(world, await postRefund(world, authorizationId, body, options));
}

const ISO = (s: unknown) => typeof s === 'string' && Number.isFinite(Date.parse(s)) && /^\d{4}-\d\d-\d\dT/.test(s);

/** The refund object exactly as the spec has it, in the given state. */
export function expectRefundShape(r: any, expected: Partial<Refund>): void {
  expect(refundFieldsOf(r), `refund fields of ${JSON.stringify(r)}`).toEqual(REFUND_FIELDS);
  expect(r.id).toMatch(/^ref_[\x21-\x7e]+$/);
  expect(r).toMatchObject(expected);
  expect(r.amount).toMatch(/^(0|[1-9]\d*)(\.\d{0,5}[1-9])?$/);
  expect(ISO(r.createdAt), `createdAt ${r.createdAt}`).toBe(true);
  expect(r.reason === null || typeof r.reason === 'string').toBe(true);
  switch (r.state) {
    case 'succeeded':
      expect(r.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(r.failure).toBeNull();
      expect(ISO(r.succeededAt), `succeededAt ${r.succeededAt}`).toBe(true);
      expect(Date.parse(r.succeededAt)).toBeGreaterThanOrEqual(Date.parse(r.createdAt));
      break;
    case 'failed':
      // Its last attempt's transaction when one was sent (reverted or never mined), else null.
      expect(r.transactionHash === null || /^0x[0-9a-f]{64}$/.test(r.transactionHash)).toBe(true);
      expect(r.lastError).toBeNull();
      expect(r.succeededAt).toBeNull();
      expect(Object.keys(r.failure ?? {}).sort()).toEqual(['code', 'message']);
      expect(typeof r.failure.message).toBe('string');
      expect(r.failure.message.length).toBeGreaterThan(8);
      break;
    case 'pending':
      expect(r.failure).toBeNull();
      expect(r.succeededAt).toBeNull();
      expect(r.transactionHash === null || /^0x[0-9a-f]{64}$/.test(r.transactionHash)).toBe(true);
      break;
    default:
      throw new Error(`unknown refund state ${r.state}`);
  }
}

// --- the chain -----------------------------------------------------------------------------------

const same = (a: string | null | undefined, b: string | null | undefined) => (a ?? '').toLowerCase() === (b ?? '').toLowerCase();

export async function balanceAt(world: World, account: Address, blockNumber?: bigint): Promise<bigint> {
  return world.publicClient.readContract({
    address: world.tokenAddress,
    abi: tokenAbi,
    functionName: 'balanceOf',
    args: [account],
    ...(blockNumber === undefined ? {} : { blockNumber }),
  }) as Promise<bigint>;
}

/** Every AuthorizationUsed log ever emitted for (authorizer, nonce). */
export async function usedLogs(world: World, authorizer: Address, nonce: Hex) {
  return world.publicClient.getContractEvents({
    address: world.tokenAddress,
    abi: tokenAbi,
    eventName: 'AuthorizationUsed',
    args: { authorizer, nonce },
    fromBlock: 0n,
    toBlock: 'latest',
  });
}

/**
 * A succeeded refund's proof onchain: its transaction was sent by the merchant key to the token as
 * transferWithAuthorization(from=merchant, to=payer, value, validAfter=0, validBefore≈chain time +
 * 300 s, nonce), its receipt holds exactly Transfer(merchant → payer, value) and
 * AuthorizationUsed(merchant, nonce), and that nonce was used exactly once, ever. Returns the nonce.
 */
export async function expectRefundOnchain(world: World, r: Refund, payer: Address, merchant: Address, value: bigint): Promise<Hex> {
  expect(r.state).toBe('succeeded');
  const hash = r.transactionHash as Hex;
  const [receipt, tx] = await Promise.all([world.publicClient.getTransactionReceipt({ hash }), world.publicClient.getTransaction({ hash })]);
  expect(receipt.status).toBe('success');
  expect(same(tx.from, merchant), `refund ${hash} sent by ${tx.from}, expected the merchant ${merchant}`).toBe(true);
  expect(same(tx.to, world.tokenAddress), 'refund sent to the token').toBe(true);
  const decoded = decodeFunctionData({ abi: tokenAbi, data: tx.input });
  expect(decoded.functionName).toBe('transferWithAuthorization');
  const [from, to, signedValue, validAfter, validBefore, nonce] = decoded.args as unknown as [Address, Address, bigint, bigint, bigint, Hex];
  expect({ from: from.toLowerCase(), to: to.toLowerCase(), value: signedValue, validAfter }).toEqual({
    from: merchant.toLowerCase(),
    to: payer.toLowerCase(),
    value,
    validAfter: 0n,
  });
  const block = await world.publicClient.getBlock({ blockNumber: receipt.blockNumber });
  expect(validBefore, 'validBefore is still ahead of the block that mined it').toBeGreaterThan(block.timestamp);
  expect(validBefore - block.timestamp, 'validBefore ≈ chain time + AUTHCAP_REFUND_VALIDITY_SECONDS (300)').toBeLessThanOrEqual(
    DEFAULT_REFUND_VALIDITY_SECONDS + 5n,
  );
  const transfers = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'Transfer' }).map((l) => ({
    from: l.args.from.toLowerCase(),
    to: l.args.to.toLowerCase(),
    value: l.args.value,
  }));
  expect(transfers).toEqual([{ from: merchant.toLowerCase(), to: payer.toLowerCase(), value }]);
  const used = parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'AuthorizationUsed' }).map((l) => ({
    authorizer: l.args.authorizer.toLowerCase(),
    nonce: l.args.nonce,
  }));
  expect(used).toEqual([{ authorizer: merchant.toLowerCase(), nonce }]);
  expect(await usedLogs(world, merchant, nonce), 'AuthorizationUsed logs for the refund nonce, ever').toHaveLength(1);
  return nonce;
}

/**
 * The chain agrees with authcap about `refunds` (all made after `since`, for this payer): the
 * Transfer(merchant → payer) logs since the mark are exactly the succeeded refunds' transactions, with
 * their amounts, and no failed refund's nonce was ever used (white-box: the nonce is derived from the
 * refund's place, activities/refund.ts), so "failed" really moved nothing.
 */
export async function expectChainAgreesWithRefunds(world: World, since: Mark, refunds: readonly Refund[]): Promise<void> {
  const block = await settledBlock(world, since.merchant);
  const paid = await world.publicClient.getContractEvents({
    address: world.tokenAddress,
    abi: tokenAbi,
    eventName: 'Transfer',
    args: { from: since.merchant, to: since.payer },
    fromBlock: since.block + 1n,
    toBlock: block,
  });
  const onchain = paid.map((l) => `${l.transactionHash}:${l.args.value}`).sort();
  const succeeded = refunds.filter((r) => r.state === 'succeeded').map((r) => `${r.transactionHash}:${parseUnits(r.amount, 6)}`);
  const failedButPaid: string[] = [];
  for (const r of refunds.filter((x) => x.state === 'failed')) {
    const place = parseRefundId(r.id);
    expect(place, `refund id ${r.id}`).toBeDefined();
    const used = await usedLogs(world, since.merchant, refundNonce(place!.authorizationRunId, place!.sequence));
    if (used.length) failedButPaid.push(`${r.id} (${r.failure?.code}) paid by ${used.map((u) => u.transactionHash).join(', ')}`);
  }
  expect(failedButPaid, 'refunds recorded failed whose nonce was used onchain: money moved').toEqual([]);
  expect(onchain, 'Transfer(merchant → payer) logs vs the succeeded refunds (transaction:value)').toEqual(succeeded.sort());
}

export interface Mark {
  block: bigint;
  payer: Address;
  merchant: Address;
  payerBalance: bigint;
  merchantBalance: bigint;
  merchantLatest: number;
  merchantPending: number;
}

/** Balances and the merchant's transaction counts, pinned to one block. */
export async function mark(world: World, payer: Address, merchant = world.merchant): Promise<Mark> {
  const block = await world.publicClient.getBlockNumber({ cacheTime: 0 });
  const [payerBalance, merchantBalance, merchantLatest, merchantPending] = await Promise.all([
    balanceAt(world, payer, block),
    balanceAt(world, merchant, block),
    world.publicClient.getTransactionCount({ address: merchant, blockNumber: block }),
    world.publicClient.getTransactionCount({ address: merchant, blockTag: 'pending' }),
  ]);
  return { block, payer, merchant, payerBalance, merchantBalance, merchantLatest, merchantPending };
}

/** Waits until everything the merchant has sent is mined; the latest block then. */
async function settledBlock(world: World, merchant: Address): Promise<bigint> {
  const pending = await world.publicClient.getTransactionCount({ address: merchant, blockTag: 'pending' });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const block = await world.publicClient.getBlockNumber({ cacheTime: 0 });
    if ((await world.publicClient.getTransactionCount({ address: merchant, blockNumber: block })) >= pending) return block;
    if (Date.now() > deadline) throw new Error(`merchant transactions up to nonce ${pending} were not mined in 20 s`);
    await sleep(100);
  }
}

async function merchantTransfers(world: World, merchant: Address, fromBlock: bigint, toBlock: bigint) {
  if (toBlock < fromBlock) return { incoming: [], outgoing: [] };
  const base = { address: world.tokenAddress, abi: tokenAbi, eventName: 'Transfer', fromBlock, toBlock } as const;
  const [incoming, outgoing] = await Promise.all([
    world.publicClient.getContractEvents({ ...base, args: { to: merchant } }),
    world.publicClient.getContractEvents({ ...base, args: { from: merchant } }),
  ]);
  return { incoming, outgoing };
}

/**
 * Since the mark: the payer's balance moved by exactly `expected.payer`; the merchant's balance moved
 * by exactly the sum of its Transfer logs (nothing else moved it), its logs with this payer net to
 * `expected.merchant`, and, where the merchant key is the file's alone, its balance moved by exactly that.
 */
export async function expectMoneyMoved(world: World, since: Mark, expected: { payer: bigint; merchant: bigint }): Promise<void> {
  const block = await settledBlock(world, since.merchant);
  const [payerNow, merchantNow] = await Promise.all([balanceAt(world, since.payer, block), balanceAt(world, since.merchant, block)]);
  expect(payerNow - since.payerBalance, "the payer's balance change").toBe(expected.payer);
  const { incoming, outgoing } = await merchantTransfers(world, since.merchant, since.block + 1n, block);
  const sum = (logs: typeof incoming) => logs.reduce((total, l) => total + l.args.value!, 0n);
  expect(merchantNow - since.merchantBalance, "the merchant's balance change vs its Transfer logs in the window").toBe(sum(incoming) - sum(outgoing));
  const withPayer = sum(incoming.filter((l) => same(l.args.from, since.payer))) - sum(outgoing.filter((l) => same(l.args.to, since.payer)));
  expect(withPayer, "the merchant's net Transfer logs with this payer").toBe(expected.merchant);
  if (world.exclusiveMerchant) expect(merchantNow - since.merchantBalance, "the (exclusive) merchant's balance change").toBe(expected.merchant);
}

/**
 * Runs `action` (which makes its own assertions) and proves it sent nothing: no merchant transaction
 * names the payer, no Transfer between merchant and payer, both balances (the merchant's where it is
 * exclusive) unchanged, and where the merchant is exclusive its transaction counts unchanged.
 */
export async function expectNothingSent(world: World, payer: Address, merchant: Address, action: () => Promise<void>, settleMs = 1_000): Promise<void> {
  const before = await mark(world, payer, merchant);
  let refusal: unknown;
  try {
    await action();
  } catch (err) {
    refusal = err ?? new Error('the action failed');
  }
  await sleep(settleMs);
  const block = await settledBlock(world, merchant);
  const named: Hex[] = [];
  for (let n = before.block + 1n; n <= block; n += 1n) {
    const b = await world.publicClient.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of b.transactions) {
      if (same(tx.from, merchant) && tx.input.toLowerCase().includes(payer.slice(2).toLowerCase())) named.push(tx.hash);
    }
  }
  expect(named, `merchant transactions naming ${payer}`).toEqual([]);
  await expectMoneyMoved(world, before, { payer: 0n, merchant: 0n });
  if (world.exclusiveMerchant) {
    const [latest, pending] = await Promise.all([
      world.publicClient.getTransactionCount({ address: merchant, blockNumber: block }),
      world.publicClient.getTransactionCount({ address: merchant, blockTag: 'pending' }),
    ]);
    expect({ latest, pending }, "the (exclusive) merchant's transaction counts").toEqual({ latest: before.merchantLatest, pending: before.merchantPending });
  }
  if (refusal) throw refusal;
}

/**
 * Moves `value` of the merchant's tokens to `to` without touching the merchant account's transaction
 * nonce (its relayer's): the merchant key signs a TransferWithAuthorization, the token owner sends it.
 */
export async function moveMerchantTokens(world: World, merchantKey: Hex, to: Address, value: bigint): Promise<TransactionReceipt> {
  const account = privateKeyToAccount(merchantKey);
  const [name, version, chainId, head] = await Promise.all([
    world.publicClient.readContract({ address: world.tokenAddress, abi: tokenAbi, functionName: 'name' }) as Promise<string>,
    world.publicClient.readContract({ address: world.tokenAddress, abi: tokenAbi, functionName: 'version' }) as Promise<string>,
    world.publicClient.getChainId(),
    world.publicClient.getBlock(),
  ]);
  const message = {
    from: account.address,
    to,
    value,
    validAfter: 0n,
    validBefore: head.timestamp + 3600n,
    nonce: toHex(randomBytes(32)),
  };
  const signature = await account.signTypedData({
    domain: { name, version, chainId, verifyingContract: world.tokenAddress },
    types: { TransferWithAuthorization: authorizationTypes.TransferWithAuthorization },
    primaryType: 'TransferWithAuthorization',
    message,
  });
  return world.ownerWrite('transferWithAuthorization', [
    message.from,
    message.to,
    message.value,
    message.validAfter,
    message.validBefore,
    message.nonce,
    signature,
  ]);
}

// --- events --------------------------------------------------------------------------------------

export const forOrder = (orderId: string) => (event: any) => event.orderId === orderId;

/** GET /v1/events for the order (and type), after the feed's 2 s hold-back, polled until `ready` says so. */
export async function feedFor(world: World, orderId: string, ready: (events: any[]) => boolean, type?: string): Promise<any[]> {
  await sleep(2_500);
  return vi.waitFor(
    async () => {
      const query = new URLSearchParams({ orderId, ...(type ? { type } : {}) });
      const res = await call(world, 'GET', `/v1/events?${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(ready(res.body.data), `feed for ${orderId}: ${res.body.data.map((e: any) => e.type).join(', ')}`).toBe(true);
      return res.body.data as any[];
    },
    { timeout: 20_000, interval: 500 },
  );
}

// --- the typed client, as the spec fixes it --------------------------------------------------------

/** The typed client's refund surface (spec, "Typed client"): its resources' signatures. */
export interface RefundsClient {
  authorizations: {
    capture(id: string, options?: { amount?: string | number; waitMs?: number }): Promise<{ authorization: AuthorizationResource; settled: boolean }>;
    get(id: string): Promise<AuthorizationResource>;
  };
  refunds: {
    create(
      authorizationId: string,
      request?: { amount?: string | number; reason?: string },
      options?: { waitMs?: number; idempotencyKey?: string },
    ): Promise<{ refund: Refund; settled: boolean }>;
    list(authorizationId: string): Promise<Refund[]>;
    get(refundId: string): Promise<Refund>;
  };
}

/** The AuthcapClient, seen through the spec's signatures (this fails to compile if they differ). */
export function refundsClient(client: AuthcapClient): RefundsClient {
  return client;
}

export const idempotencyKey = (label: string) => `${label}-${randomUUID()}`;

// --- manual mining on an isolated chain (additive: ordering transactions within a block) ----------

export interface PooledTransaction {
  hash: Hex;
  /** EIP-1559 fees (a legacy transaction's gas price for both). */
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  blockNumber: bigint | null;
}

/** A transaction as the node holds it (in the pool while the isolated chain's mining is stopped): its fees. */
/**
 * The merchant key's transaction waiting in the pool (mining stopped): the relayer sent it; the
 * authorization or refund names it only once it shows in a block (its follower reads the chain).
 */
export async function pendingFrom(world: IsolatedWorld, sender: Address): Promise<Hex> {
  return vi.waitFor(
    async () => {
      const pool = (await world.publicClient.request({ method: 'txpool_content' as never })) as { pending: Record<string, Record<string, { hash: Hex }>> };
      const mine = Object.entries(pool.pending ?? {}).find(([from]) => from.toLowerCase() === sender.toLowerCase())?.[1] ?? {};
      const hashes = Object.values(mine).map((tx) => tx.hash);
      expect(hashes.length, `a transaction of ${sender} in the pool`).toBeGreaterThan(0);
      return hashes[hashes.length - 1]!;
    },
    { timeout: 60_000, interval: 200 },
  );
}

export async function pooledTransaction(world: IsolatedWorld, hash: Hex): Promise<PooledTransaction> {
  const tx = await world.publicClient.getTransaction({ hash });
  const maxFeePerGas = tx.maxFeePerGas ?? tx.gasPrice;
  const maxPriorityFeePerGas = tx.maxPriorityFeePerGas ?? tx.gasPrice;
  if (maxFeePerGas === undefined || maxPriorityFeePerGas === undefined) throw new Error(`transaction ${hash} has no fees`);
  return { hash, maxFeePerGas, maxPriorityFeePerGas, blockNumber: tx.blockNumber };
}

/**
 * One transaction from the token owner with the fees given, sent and not waited for (the chain's
 * mining may be stopped). anvil orders its pool by max fee per gas, then by arrival: a higher max fee
 * puts it ahead of a transaction already in the pool, a lower one (sent after it) behind it.
 */
export async function sendOwnerTransaction(
  world: IsolatedWorld,
  functionName: OwnerFunction,
  args: readonly unknown[],
  fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
): Promise<Hex> {
  const wallet = world.chain.ownerWallet;
  return wallet.writeContract({
    address: world.tokenAddress,
    abi: tokenAbi,
    functionName,
    args,
    account: wallet.account!,
    chain: undefined,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  } as never);
}

/**
 * Runs `action` with the isolated chain's mining stopped (transactions wait in the pool until the
 * action mines a block with `evm_mine`), and always resumes interval mining (1 s blocks) after it.
 */
export async function withMiningStopped<T>(world: IsolatedWorld, action: () => Promise<T>): Promise<T> {
  await world.chain.setMining(false);
  try {
    return await action();
  } finally {
    await world.chain.setMining(true);
  }
}

// --- what a workflow published, version by version (Temporal history) ---------------------------

/**
 * Every memo upsert of a workflow's latest run, decoded with the operator's keys (the Temporal UI's
 * view): each version of each memo key the workflow published, in order. Proves what callers could
 * ever have read, not only what a poll happened to see.
 */
export async function memoVersions(temporal: Client, workflowId: string): Promise<Record<string, unknown>[]> {
  const history = await temporal.workflow.getHandle(workflowId).fetchHistory();
  const converter = temporal.workflow.options.loadedDataConverter;
  const versions: Record<string, unknown>[] = [];
  for (const event of history.events ?? []) {
    const fields = event.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields;
    if (!fields) continue;
    versions.push(sealedEntries((await decodeMapFromPayloads(converter, fields as never)) as Record<string, unknown>));
  }
  return versions;
}
