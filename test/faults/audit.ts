// The audit every fault case ends with: what the chain proves against what authcap says.
//   lost          an authorization whose state disagrees with the chain (captured without a log, or a
//                 log for a nonce authcap does not call captured/canceled)
//   capturedTwice more than one AuthorizationUsed / AuthorizationCanceled log for one nonce, or two
//                 captures paid out for one authorization
//   stuck         not in a final state although its deadline passed (with a grace period)
//   nonceGaps     the merchant's pending and latest transaction counts still differ after the wait,
//                 or merchant transactions beyond the captures and cancellations it made
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { encodeEventTopics, parseEventLogs, type Address, type Hex } from 'viem';
import { AuthcapError } from '../../domain/errors.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import type { World } from './harness.js';
import { eventually } from './harness.js';

export interface AuditCounts {
  audited: number;
  lost: number;
  capturedTwice: number;
  stuck: number;
  nonceGaps: number;
}

export const RESULTS_DIR = join(tmpdir(), 'authcap-faults-results');

export async function audit(
  world: World,
  ids: string[],
  options: { caseName: string; merchantTxBefore: number; expectedExtraTx?: number; expectedExtraValue?: bigint },
): Promise<AuditCounts & { details: string[] }> {
  const details: string[] = [];
  const counts: AuditCounts = { audited: ids.length, lost: 0, capturedTwice: 0, stuck: 0, nonceGaps: 0 };
  const used = encodeEventTopics({ abi: tokenAbi, eventName: 'AuthorizationUsed' })[0];
  const canceled = encodeEventTopics({ abi: tokenAbi, eventName: 'AuthorizationCanceled' })[0];
  const logs = await world.publicClient.getLogs({ address: world.tokenAddress, fromBlock: 0n, toBlock: 'latest' });
  const byNonce = new Map<string, { used: number; canceled: number }>();
  for (const log of logs) {
    if (log.topics[0] !== used && log.topics[0] !== canceled) continue;
    const key = `${log.topics[1]!.slice(26).toLowerCase()}:${log.topics[2]!.toLowerCase()}`;
    const entry = byNonce.get(key) ?? { used: 0, canceled: 0 };
    if (log.topics[0] === used) entry.used += 1;
    else entry.canceled += 1;
    byNonce.set(key, entry);
  }
  const head = await world.publicClient.getBlock();
  let captures = 0;
  let cancellations = 0;
  let capturedValue = 0n;
  let unavailable = 0;
  // A read the server could not answer within the client's 3 s bound is a 503 a merchant retries
  // after its Retry-After; the audit does the same (bounded), and says how often it had to.
  const read = async (id: string) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await world.client.getAuthorization(id);
      } catch (err) {
        if (!(err instanceof AuthcapError && err.code === 'temporal_unavailable') || attempt === 5) throw err;
        unavailable += 1;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  };
  for (const id of ids) {
    const a = await read(id);
    if (!a.authorization) continue;
    const key = `${a.authorization.from.slice(2).toLowerCase()}:${a.authorization.nonce.toLowerCase()}`;
    const onchain = byNonce.get(key) ?? { used: 0, canceled: 0 };
    if (onchain.used + onchain.canceled > 1) {
      counts.capturedTwice += 1;
      details.push(`${id}: ${onchain.used} used + ${onchain.canceled} canceled logs`);
    }
    const final = ['captured', 'canceled', 'voided', 'expired', 'rejected'].includes(a.state);
    if (!final && Number(a.authorization.validBefore) + 120 < Number(head.timestamp)) {
      counts.stuck += 1;
      details.push(`${id}: ${a.state} past its deadline`);
    }
    const agrees =
      (a.state === 'captured' && onchain.used === 1) ||
      (a.state === 'canceled' && onchain.canceled === 1) ||
      (['voided', 'expired', 'rejected', 'drafted', 'stored'].includes(a.state) && onchain.used === 0 && (a.state !== 'expired' || onchain.canceled === 0)) ||
      (!final && a.state !== 'drafted' && a.state !== 'stored');
    if (!agrees) {
      counts.lost += 1;
      details.push(`${id}: authcap says ${a.state}, the chain has ${onchain.used} used / ${onchain.canceled} canceled`);
    }
    if (a.state === 'captured') capturedValue += BigInt(a.authorization.value);
    if (a.state === 'captured' && a.capture?.by === 'authcap') captures += 1;
    if (a.state === 'canceled' && a.cancellation?.by === 'authcap') cancellations += 1;
  }
  if (unavailable > 0) details.push(`note: ${unavailable} read(s) answered temporal_unavailable and were retried`);
  // No nonce gap: whatever the relayer sent is mined (pending == latest once the pool drains).
  const merchant = world.merchant.address as Address;
  const drained = await eventually(
    async () => {
      const [latest, pending] = await Promise.all([
        world.publicClient.getTransactionCount({ address: merchant, blockTag: 'latest' }),
        world.publicClient.getTransactionCount({ address: merchant, blockTag: 'pending' }),
      ]);
      return { latest, pending };
    },
    (c) => c.latest === c.pending,
    60_000,
  );
  if (!drained || drained.latest !== drained.pending) {
    counts.nonceGaps += 1;
    details.push(`merchant pending ${drained?.pending} ≠ latest ${drained?.latest}`);
  }
  const sent = (drained?.latest ?? 0) - options.merchantTxBefore;
  const allowed = captures + cancellations + (options.expectedExtraTx ?? 0);
  if (sent > allowed)
    details.push(`note: merchant sent ${sent} transactions for ${captures} captures + ${cancellations} cancellations (reverted retries or no-op fillers)`);
  // Money: the merchant holds exactly what authcap says was captured (each world starts it at zero).
  const merchantBalance = (await world.publicClient.readContract({
    address: world.tokenAddress,
    abi: tokenAbi,
    functionName: 'balanceOf',
    args: [merchant],
  })) as bigint;
  if (merchantBalance !== capturedValue + (options.expectedExtraValue ?? 0n)) {
    counts.lost += 1;
    details.push(`merchant holds ${merchantBalance}, authcap captured ${capturedValue}`);
  }
  mkdirSync(RESULTS_DIR, { recursive: true });
  appendFileSync(join(RESULTS_DIR, 'results.jsonl'), `${JSON.stringify({ case: options.caseName, ...counts, details })}\n`);
  return { ...counts, details };
}

export function merchantTransfers(receiptLogs: Parameters<typeof parseEventLogs>[0]['logs']): number {
  return parseEventLogs({ abi: tokenAbi, logs: receiptLogs, eventName: 'Transfer' }).length;
}

export type { Hex };
