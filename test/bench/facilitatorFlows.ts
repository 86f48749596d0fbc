// authcap as an x402 facilitator, used as an x402 resource server uses one: the payer's wallet signs a
// TransferWithAuthorization (viem, with x402's own EIP-712 types), the server POSTs it to
// {apiUrl}/x402/verify and then /x402/settle with its facilitator key, as @x402/core's
// HTTPFacilitatorClient does (no retry of an HTTP error; one more settle after `settlement_pending`,
// as the SDK's resource server does). Also the fresh payers the row pays from (the dev token's owner
// mints them the token) and the on-chain judge of every settle answer.
import { randomBytes } from 'node:crypto';
import { authorizationTypes } from '@x402/evm';
import { createWalletClient, http, parseEventLogs, toHex, type Address, type Hex, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tokenAbi } from '../../domain/tokenAbi.js';
import type { Payer } from './authcapFlows.js';
import { pool } from './stats.js';

/** The answers of /x402/verify and /x402/settle (x402 v2 specification §7). */
export interface VerifyAnswer {
  isValid: boolean;
  invalidReason?: string;
  invalidMessage?: string;
  payer?: string;
}
export interface SettleAnswer {
  success: boolean;
  errorReason?: string;
  errorMessage?: string;
  transaction: string;
  network?: string;
  payer?: string;
  amount?: string;
}

/** One payment as the row saw it, whoever the facilitator was; judged on the chain afterwards (judgePayments). */
export interface PaymentRecord {
  payer: Address;
  payTo: Address;
  nonce: Hex;
  amount: bigint;
  /** What the payer held before (fresh payers: exactly what they were minted). */
  held: bigint;
  validBefore: bigint;
  verify?: { isValid: boolean; invalidReason?: string };
  /** The last settle answer (after the one retry of a `settlement_pending`). */
  settle?: { success: boolean; errorReason?: string; errorMessage?: string; transaction: string };
  /** Settle answers of `settlement_pending` before the last. */
  pendingAnswers: number;
  /** An HTTP status other than 200, or what the call threw. */
  error?: string;
  verifyMs: number;
  settleMs: number;
  ms: number;
  /** Whether the answered transaction's receipt was there when asked right after the answer. */
  minedAtAnswer?: Promise<boolean>;
  /** The request body, to settle it again (authcap's payments only). */
  body?: unknown;
  /** One at a time: the head block before the signature and right after the answer. */
  blocks?: { start: bigint; answered: bigint };
}

export interface X402Setup {
  apiUrls: string[];
  facilitatorKey: string;
  chainId: number;
  token: Address;
  /** The token's EIP-712 name and version (the requirements' `extra`). */
  domain: { name: string; version: string };
  /** The merchant's address: authcap settles only to its own keys. */
  payTo: Address;
}

/** What a resource server's facilitator client does, against authcap's /x402 routes. */
export class X402Facilitator {
  private turn = 0;
  constructor(private readonly setup: X402Setup) {}

  private requirements(amount: bigint) {
    const { chainId, token, payTo, domain } = this.setup;
    return { scheme: 'exact', network: `eip155:${chainId}`, asset: token, amount: amount.toString(), payTo, maxTimeoutSeconds: 60, extra: { ...domain } };
  }

  /** The payer's wallet: validAfter 0, validBefore now + 60 s (or `validSeconds`), a random 32-byte nonce. */
  async sign(payer: Payer, amount: bigint, validSeconds = 60): Promise<{ body: unknown; nonce: Hex; validBefore: bigint }> {
    const { chainId, token, payTo, domain } = this.setup;
    const validBefore = BigInt(Math.floor(Date.now() / 1000) + validSeconds);
    const nonce = toHex(randomBytes(32));
    const message = { from: payer.address, to: payTo, value: amount, validAfter: 0n, validBefore, nonce };
    const signature = await privateKeyToAccount(payer.privateKey).signTypedData({
      domain: { ...domain, chainId, verifyingContract: token },
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message,
    });
    const requirements = this.requirements(amount);
    const authorization = { ...message, value: amount.toString(), validAfter: '0', validBefore: validBefore.toString() };
    return {
      body: {
        x402Version: 2,
        paymentPayload: { x402Version: 2, resource: { url: 'http://shop.example/paid' }, accepted: requirements, payload: { authorization, signature } },
        paymentRequirements: requirements,
      },
      nonce,
      validBefore,
    };
  }

  /** POST {apiUrl}/x402/<route>: the answer, or the HTTP error as a string. Calls go to each API in turn. */
  async post<T>(route: 'verify' | 'settle', body: unknown): Promise<{ answer?: T; error?: string }> {
    const url = this.setup.apiUrls[this.turn++ % this.setup.apiUrls.length]!;
    try {
      const res = await fetch(`${url}/x402/${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.setup.facilitatorKey}` },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== 200) return { error: `${route} HTTP ${res.status}: ${text.slice(0, 300)}` };
      return { answer: JSON.parse(text) as T };
    } catch (err) {
      return { error: `${route} threw: ${(err as Error).message.split('\n')[0]}` };
    }
  }

  /** Sign, verify, settle (settle again once after `settlement_pending`), timed from before the signature. */
  async pay(payer: Payer, amount: bigint, held: bigint, chain: PublicClient): Promise<PaymentRecord> {
    const started = performance.now();
    const signed = await this.sign(payer, amount);
    const record = this.recordOf(payer, amount, held, signed);
    const verified = await this.post<VerifyAnswer>('verify', signed.body);
    record.verifyMs = performance.now() - started;
    if (verified.answer) record.verify = verifyOf(verified.answer);
    if (!verified.answer?.isValid) {
      record.error = verified.error;
      record.ms = performance.now() - started;
      return record;
    }
    await this.settleInto(record, chain);
    record.ms = performance.now() - started;
    record.settleMs = record.ms - record.verifyMs;
    return record;
  }

  /** The record of a signed payment, before any answer. */
  recordOf(payer: Payer, amount: bigint, held: bigint, signed: { body: unknown; nonce: Hex; validBefore: bigint }): PaymentRecord {
    return {
      payer: payer.address,
      payTo: this.setup.payTo,
      nonce: signed.nonce,
      amount,
      held,
      validBefore: signed.validBefore,
      pendingAnswers: 0,
      verifyMs: 0,
      settleMs: 0,
      ms: 0,
      body: signed.body,
    };
  }

  /** POST /x402/settle for the record's body (once more after `settlement_pending`), its answer kept in the record. */
  async settleInto(record: PaymentRecord, chain: PublicClient): Promise<void> {
    for (let attempt = 1; attempt <= 2; attempt++) {
      const settled = await this.post<SettleAnswer>('settle', record.body);
      if (!settled.answer) {
        record.error = settled.error;
        break;
      }
      record.settle = settleOf(settled.answer);
      if (settled.answer.errorReason !== 'settlement_pending' || attempt === 2) break;
      record.pendingAnswers += 1;
    }
    const tx = record.settle?.success ? (record.settle.transaction as Hex) : undefined;
    if (tx)
      record.minedAtAnswer = chain.getTransactionReceipt({ hash: tx }).then(
        () => true,
        () => false,
      );
  }
}

export function verifyOf(a: VerifyAnswer): NonNullable<PaymentRecord['verify']> {
  return { isValid: a.isValid, ...(a.invalidReason ? { invalidReason: a.invalidReason } : {}) };
}

export function settleOf(a: SettleAnswer): NonNullable<PaymentRecord['settle']> {
  return {
    success: a.success,
    transaction: a.transaction,
    ...(a.errorReason ? { errorReason: a.errorReason } : {}),
    ...(a.errorMessage ? { errorMessage: a.errorMessage } : {}),
  };
}

/**
 * `count` new payer keys, each minted `each` of the token by the dev token's owner (not timed): one
 * payer per payment, so a payer's balance says whether its one payment moved money. Payers need no
 * ETH: they only sign.
 */
export async function freshPayers(options: {
  chain: PublicClient;
  rpcUrl: string;
  token: Address;
  owner: { privateKey: Hex };
  count: number;
  each: bigint;
}): Promise<Payer[]> {
  const { chain, token, count, each } = options;
  const payers = Array.from({ length: count }, () => {
    const privateKey = generatePrivateKey();
    return { address: privateKeyToAccount(privateKey).address, privateKey };
  });
  const owner = privateKeyToAccount(options.owner.privateKey);
  const wallet = createWalletClient({ transport: http(options.rpcUrl), account: owner });
  const chainId = await chain.getChainId();
  let nonce = await chain.getTransactionCount({ address: owner.address, blockTag: 'pending' });
  const fees = await chain.estimateFeesPerGas();
  const hashes: Hex[] = [];
  // Explicit nonces and gas: the mints go out back to back and are mined a few blocks later.
  for (const payer of payers)
    hashes.push(
      await wallet.writeContract({
        chain: null,
        address: token,
        abi: tokenAbi,
        functionName: 'mint',
        args: [payer.address, each],
        nonce: nonce++,
        gas: 120_000n,
        maxFeePerGas: fees.maxFeePerGas * 2n,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        chainId,
      } as never),
    );
  await chain.waitForTransactionReceipt({ hash: hashes.at(-1)!, pollingInterval: 50, timeout: 60_000 });
  const failed = (
    await pool(hashes, 20, async (hash) => (await chain.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 60_000 })).status !== 'success')
  ).filter(Boolean).length;
  if (failed > 0) throw new Error(`${failed} of ${count} mints to fresh payers reverted`);
  return payers;
}

/** How the chain judged the settle answers of one side (authcap, or baseline B). */
export interface AnswerAudit {
  payments: number;
  /** Answered success; answered a refusal (a reason other than `settlement_pending`); answered nothing final (HTTP error, throw, still pending). */
  success: number;
  refused: number;
  noAnswer: number;
  /**
   * Answers the chain contradicts: target 0. A success without this payment's transfer in a mined block,
   * a refusal whose nonce is used, a payer whose balance is not its minted amount less its used nonces'.
   */
  wrong: number;
  wrongExamples: string[];
  /** Success answers whose transaction had no receipt yet when asked right after the answer. */
  answeredBeforeMined: number;
  /** Payments without a final answer that the chain shows paid, or not. */
  noAnswerPaid: number;
  noAnswerUnpaid: number;
}

/**
 * Each answer against the chain, read after the run: a success must name a mined, successful
 * transaction whose receipt holds this payment's Transfer(payer → payTo, amount) from the token and its
 * AuthorizationUsed(payer, nonce); a refusal must leave the nonce unused. And each payer must hold what
 * it was minted less the amounts of its used nonces, no more and no less (a payer pays once, or twice
 * in the probes where two payloads race for one amount). Refusals are read once their validBefore has
 * passed (the caller waits secondsUntilUnpayable first), when no transfer of theirs can come.
 */
export async function judgePayments(chain: PublicClient, token: Address, records: PaymentRecord[]): Promise<AnswerAudit> {
  const audit: AnswerAudit = {
    payments: records.length,
    success: 0,
    refused: 0,
    noAnswer: 0,
    wrong: 0,
    wrongExamples: [],
    answeredBeforeMined: 0,
    noAnswerPaid: 0,
    noAnswerUnpaid: 0,
  };
  const same = (a: string | undefined, b: string) => a !== undefined && a.toLowerCase() === b.toLowerCase();
  const wrong = (r: PaymentRecord, why: string) => {
    audit.wrong += 1;
    if (audit.wrongExamples.length < 5) audit.wrongExamples.push(`${r.payer} nonce ${r.nonce.slice(0, 10)}…: ${why}`);
  };
  const used = await pool(records, 16, (r) =>
    chain.readContract({ address: token, abi: tokenAbi, functionName: 'authorizationState', args: [r.payer, r.nonce] }),
  );
  const byPayer = new Map<string, PaymentRecord[]>();
  for (const r of records) byPayer.set(r.payer.toLowerCase(), [...(byPayer.get(r.payer.toLowerCase()) ?? []), r]);
  const usedOf = new Map(records.map((r, i) => [r, used[i]!]));
  await pool([...byPayer.values()], 16, async (mine) => {
    const balance = await chain.readContract({ address: token, abi: tokenAbi, functionName: 'balanceOf', args: [mine[0]!.payer] });
    // A payload settled twice at once is two records of one nonce: it pays once.
    const paidNonces = new Map(mine.filter((r) => usedOf.get(r)).map((r) => [r.nonce.toLowerCase(), r.amount]));
    const spent = [...paidNonces.values()].reduce((sum, amount) => sum + amount, 0n);
    if (balance !== mine[0]!.held - spent) wrong(mine[0]!, `the payer holds ${balance}, not ${mine[0]!.held} less the ${spent} its used nonces paid`);
  });
  await pool(records, 16, async (r, i) => {
    const nonceUsed = used[i]!;
    if (r.settle?.success) {
      audit.success += 1;
      if (r.minedAtAnswer && !(await r.minedAtAnswer)) audit.answeredBeforeMined += 1;
      const receipt = await chain.getTransactionReceipt({ hash: r.settle.transaction as Hex }).catch(() => undefined);
      if (!receipt) return wrong(r, `answered success with ${r.settle.transaction}, which has no receipt`);
      if (receipt.status !== 'success') return wrong(r, `answered success with ${r.settle.transaction}, which reverted`);
      const ofToken = receipt.logs.filter((l) => same(l.address, token));
      const transfers = parseEventLogs({ abi: tokenAbi, logs: ofToken, eventName: 'Transfer' });
      const usedLogs = parseEventLogs({ abi: tokenAbi, logs: ofToken, eventName: 'AuthorizationUsed' });
      if (!transfers.some((t) => same(t.args.from, r.payer) && same(t.args.to, r.payTo) && t.args.value === r.amount))
        return wrong(r, `answered success with ${r.settle.transaction}, which holds no Transfer(payer → payTo, ${r.amount})`);
      if (!usedLogs.some((l) => same(l.args.authorizer, r.payer) && same(l.args.nonce, r.nonce)))
        return wrong(r, `answered success with ${r.settle.transaction}, which holds no AuthorizationUsed of this nonce`);
      if (!nonceUsed) return wrong(r, 'answered success, but the nonce is unused');
      return;
    }
    const final = r.settle && r.settle.errorReason !== 'settlement_pending' ? r.settle : undefined;
    const refusedAtVerify = !r.settle && r.verify && !r.verify.isValid;
    if (final || refusedAtVerify) {
      audit.refused += 1;
      if (nonceUsed) wrong(r, `answered ${final ? `settle ${final.errorReason}` : `verify ${r.verify?.invalidReason}`}, but the nonce is used`);
      return;
    }
    audit.noAnswer += 1;
    if (nonceUsed) audit.noAnswerPaid += 1;
    else audit.noAnswerUnpaid += 1;
  });
  return audit;
}

/** Seconds until the last refused or unanswered payment's validBefore has passed (0 when none is left to wait for). */
export function secondsUntilUnpayable(records: PaymentRecord[]): number {
  const open = records.filter((r) => !r.settle?.success).map((r) => Number(r.validBefore));
  if (open.length === 0) return 0;
  return Math.max(0, Math.max(...open) + 2 - Date.now() / 1000);
}
