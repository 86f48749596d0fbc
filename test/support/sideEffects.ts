// Proof that a refused request changed nothing: the resource reads back identical, the payer's
// balance is untouched, and the merchant sent no transaction that touches the payer.
//
// Test files run in parallel against one chain and one merchant key, so the merchant's transaction
// count may move because of another file's capture. Every merchant transaction in the window is
// therefore read back from the chain: the counts must be explained exactly by those transactions,
// and none of them may name this payer. When no other file is capturing, that means the counts
// (`latest` and `pending`) are simply unchanged.
import { expect } from 'vitest';
import type { Address, Hex } from 'viem';
import { api, chain, dev, tokenBalance } from './api.js';

export interface MerchantMark {
  block: bigint;
  latest: number;
  pending: number;
}

export interface MerchantTransaction {
  hash: Hex;
  nonce: number;
  input: Hex;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The merchant's transaction counts, `latest` pinned to a block so the later scan starts exactly there. */
export async function markMerchant(): Promise<MerchantMark> {
  const c = chain();
  const address = dev().merchantAddress;
  const block = await c.getBlockNumber();
  const [latest, pending] = await Promise.all([
    c.getTransactionCount({ address, blockNumber: block }),
    c.getTransactionCount({ address, blockTag: 'pending' }),
  ]);
  return { block, latest, pending };
}

/**
 * Every merchant transaction since the mark. Waits until all the merchant has sent (its `pending`
 * count) is mined, so each one can be read back and attributed.
 */
export async function merchantTransactionsSince(mark: MerchantMark) {
  const c = chain();
  const address = dev().merchantAddress;
  const pending = await c.getTransactionCount({ address, blockTag: 'pending' });
  const deadline = Date.now() + 15_000;
  let block: bigint;
  let latest: number;
  for (;;) {
    block = await c.getBlockNumber();
    latest = await c.getTransactionCount({ address, blockNumber: block });
    if (latest >= pending) break;
    if (Date.now() > deadline) throw new Error(`merchant transactions up to nonce ${pending} were not mined in 15 s`);
    await sleep(100);
  }
  const transactions: MerchantTransaction[] = [];
  for (let n = mark.block + 1n; n <= block; n += 1n) {
    const b = await c.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of b.transactions) {
      if (tx.from.toLowerCase() === address.toLowerCase()) transactions.push({ hash: tx.hash, nonce: tx.nonce, input: tx.input });
    }
  }
  return { block, latest, pending, transactions };
}

function mentions(input: Hex, account: Address): boolean {
  return input.toLowerCase().includes(account.slice(2).toLowerCase());
}

/** Asserts the merchant sent nothing that touches `payer` since the mark (see the file comment). */
export async function expectNoMerchantTransactionFor(mark: MerchantMark, payer: Address): Promise<void> {
  const after = await merchantTransactionsSince(mark);
  // The scan is complete: it holds exactly the transactions the `latest` count moved by.
  expect(after.transactions.length, 'merchant transactions found vs its latest count delta').toBe(after.latest - mark.latest);
  const ours = after.transactions.filter((tx) => mentions(tx.input, payer));
  expect(
    ours.map((tx) => tx.hash),
    `merchant transactions naming ${payer}`,
  ).toEqual([]);
  // Whatever moved the counts belongs to another test file's payer; with none, both counts are unchanged.
  const others = after.transactions.filter((tx) => !mentions(tx.input, payer));
  expect(after.latest, 'merchant latest transaction count').toBe(mark.latest + others.length);
  const sentInWindow = others.filter((tx) => tx.nonce >= mark.pending && tx.nonce < after.pending).length;
  expect(after.pending, 'merchant pending transaction count').toBe(mark.pending + sentInWindow);
}

export interface NothingChangesScope {
  /** The payer whose balance must not move and whom no merchant transaction may name. */
  payer: Address;
  /** A resource that must read back identical (state, history, lastError, everything). */
  id?: string;
  /** Time to give a wrongly started capture to show up onchain before checking. */
  settleMs?: number;
}

/** Runs `action` (which makes its own assertions about the response) and proves it changed nothing. */
export async function expectNothingChanges(scope: NothingChangesScope, action: () => Promise<void>): Promise<void> {
  const before = scope.id ? await api('GET', `/v1/authorizations/${scope.id}`) : undefined;
  if (before) expect(before.status).toBe(200);
  const balance = await tokenBalance(scope.payer);
  const mark = await markMerchant();

  // A wrong answer is reported after the side-effect checks, so a failure says both what the API
  // answered and whether anything changed.
  let refusal: unknown;
  try {
    await action();
  } catch (err) {
    refusal = err ?? new Error('the action failed');
  }

  await sleep(scope.settleMs ?? 300);
  if (before) {
    const after = await api('GET', `/v1/authorizations/${scope.id}`);
    expect(after.status).toBe(200);
    expect(after.body, 'the resource after the refused request').toEqual(before.body);
  }
  await expectNoMerchantTransactionFor(mark, scope.payer);
  expect(await tokenBalance(scope.payer), "the payer's token balance").toBe(balance);
  if (refusal) throw refusal;
}

/** A refusal in the API's error shape, with a message a person can act on. */
export function expectApiError(res: { status: number; body: any }, status: number, code: string, message?: RegExp): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  const text: unknown = res.body.error.message;
  expect(typeof text).toBe('string');
  expect((text as string).length).toBeGreaterThan(8);
  expect((text as string).length).toBeLessThan(300);
  expect(text).not.toMatch(/internal error|undefined|\[object Object\]|\.ts:\d+|^Error:/);
  if (message) expect(text).toMatch(message);
}
