// The chain is the ledger of an authorization's refunds. Every refund the merchant key ever signs for
// it is under a nonce of its place, refundNonce(run, 0..MAX_REFUNDS_PER_AUTHORIZATION), and the token
// keeps which of those nonces moved money, and its logs how much. A refunds workflow's memory can be
// rewound (a Temporal reset, by anyone with admin rights on the namespace); the chain's cannot. So the
// sum of an authorization's refunds is bounded here, from the chain, before the key signs another.
import { BaseError, TransactionReceiptNotFoundError, encodeEventTopics, parseEventLogs, type Address, type Hex } from 'viem';
import { MAX_REFUNDS_PER_AUTHORIZATION } from '../domain/refunds.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';
import { authorizationCanceledTopic, authorizationUsedTopic } from './nonceState.js';
import { refundNonce } from './refundNonce.js';
import type { DecodedLog } from './rpc/logReader.js';

const transferTopic = encodeEventTopics({ abi: tokenAbi, eventName: 'Transfer' })[0];

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const addressTopic = (address: Address): Hex => `0x${address.slice(2).toLowerCase().padStart(64, '0')}`;

/** Whether a refund's sequence is one of its authorization's places: 0 (a partial capture's release) to the most a ledger keeps. */
export function isRefundPlace(sequence: number): boolean {
  return Number.isInteger(sequence) && sequence >= 0 && sequence <= MAX_REFUNDS_PER_AUTHORIZATION;
}

/** A refund of the authorization that moved money (or whose nonce was canceled, moving nothing). */
export interface LandedRefund {
  sequence: number;
  transactionHash: Hex;
  /** Whom it paid (null: its nonce was canceled, nothing moved). */
  to: Address | null;
  value: bigint;
}

/** What moved under the merchant's nonce in that transaction: the Transfer the token makes right after AuthorizationUsed. */
export interface LandedTransfer {
  to: Address;
  value: bigint;
}

/**
 * The refunds of `authorizationRunId` whose nonces the merchant has used or canceled in the pending
 * view, other than `except`: one multicall of authorizationState over every place, then, only if one
 * is used, one log read from the capture's block (`fromBlock`) of their AuthorizationUsed logs and the
 * merchant's Transfers to the payer (one filter: the nonces and the payer share the third topic). A
 * node that does not answer, or a nonce used whose log is not readable yet, throws: no verdict.
 */
export async function landedRefunds(
  ctx: Pick<ChainContext, 'publicClient' | 'logs' | 'tokenAddress'>,
  query: { merchant: Address; payer: Address; authorizationRunId: string; fromBlock: bigint; except?: number },
): Promise<LandedRefund[]> {
  const places = Array.from({ length: MAX_REFUNDS_PER_AUTHORIZATION + 1 }, (_, sequence) => sequence)
    .filter((sequence) => sequence !== query.except)
    .map((sequence) => ({ sequence, nonce: refundNonce(query.authorizationRunId, sequence) }));
  const consumed = await ctx.publicClient.multicall({
    contracts: places.map((p) => ({
      address: ctx.tokenAddress,
      abi: tokenAbi,
      functionName: 'authorizationState' as const,
      args: [query.merchant, p.nonce] as const,
    })),
    allowFailure: false,
    deployless: true,
    blockTag: 'pending',
    // One eth_call for every place (viem would otherwise split it in 1 KB chunks: seven calls).
    batchSize: 0,
  });
  const used = places.filter((_, i) => consumed[i]);
  if (used.length === 0) return [];
  const logs = (
    await ctx.logs.getLogs({
      address: ctx.tokenAddress,
      topics: [
        [authorizationUsedTopic, authorizationCanceledTopic, transferTopic],
        [addressTopic(query.merchant)],
        [...used.map((p) => p.nonce), addressTopic(query.payer)],
      ],
      fromBlock: query.fromBlock,
      toBlock: 'pending',
    })
  ).filter((l) => !l.removed && same(l.address, ctx.tokenAddress));
  const landed: LandedRefund[] = [];
  for (const place of used) {
    const log = logs.find(
      (l) => (l.topics[0] === authorizationUsedTopic || l.topics[0] === authorizationCanceledTopic) && l.topics[2] && same(l.topics[2], place.nonce),
    );
    if (!log?.transactionHash) throw new Error(`refund ${place.sequence}'s nonce is used but its log is not in a block yet`);
    if (log.topics[0] === authorizationCanceledTopic) {
      landed.push({ sequence: place.sequence, transactionHash: log.transactionHash, to: null, value: 0n });
      continue;
    }
    // Paid to the payer: its Transfer came with the same read. To anyone else (no refund authcap
    // signs does that): the transaction's receipt says how much.
    const transfer = transferAfter(logs, log, query.merchant) ?? (await landedTransfer(ctx, query.merchant, place.nonce, log.transactionHash));
    landed.push({ sequence: place.sequence, transactionHash: log.transactionHash, ...transfer });
  }
  return landed;
}

/** The first Transfer from `from` after `used` in its transaction, among `logs`. */
function transferAfter(logs: DecodedLog[], used: DecodedLog, from: Address): LandedTransfer | undefined {
  const after = logs
    .filter((l) => l.eventName === 'Transfer' && l.transactionHash === used.transactionHash && (l.logIndex ?? 0) > (used.logIndex ?? 0))
    .filter((l) => same(String(l.args?.from), from))
    .sort((a, b) => (a.logIndex ?? 0) - (b.logIndex ?? 0))[0];
  return after ? { to: after.args!.to as Address, value: after.args!.value as bigint } : undefined;
}

/**
 * What the merchant's `nonce` moved in `transactionHash`, from its receipt: to whom and how much. A
 * receipt not there yet, or without that nonce's AuthorizationUsed and Transfer, throws (asked again).
 */
export async function landedTransfer(
  ctx: Pick<ChainContext, 'publicClient' | 'tokenAddress'>,
  merchant: Address,
  nonce: Hex,
  transactionHash: Hex,
): Promise<LandedTransfer> {
  const receipt = await ctx.publicClient.getTransactionReceipt({ hash: transactionHash }).catch((err: unknown) => {
    if (err instanceof BaseError && err.walk((e) => e instanceof TransactionReceiptNotFoundError)) return undefined;
    throw err;
  });
  const logs = parseEventLogs({ abi: tokenAbi, logs: (receipt?.logs ?? []).filter((l) => same(l.address, ctx.tokenAddress)) });
  const used = logs.find((l) => l.eventName === 'AuthorizationUsed' && same(l.args.authorizer, merchant) && same(l.args.nonce, nonce));
  const transfer = used && logs.find((l) => l.eventName === 'Transfer' && l.logIndex > used.logIndex && same(l.args.from, merchant));
  if (transfer?.eventName !== 'Transfer') throw new Error(`no transfer by ${merchant} under nonce ${nonce} in transaction ${transactionHash} yet`);
  return { to: transfer.args.to, value: transfer.args.value };
}
