// A held payment's escrow call in one activity, as captureOnchain.ts is for a token capture: it hands
// the typed call to the merchant's relayer, then follows the hold's own escrow event to the
// confirmation depth. A capture or void consumes no nonce to follow; its event does the job: the
// escrow's PaymentCaptured / PaymentVoided (PaymentReclaimed: the payer's own) logs carry the
// payment's hash, and parts go to the chain one at a time, so the first such event after the ones
// this hold already counted is this call's, whichever transaction carried it (ours, a fee-bumped
// replacement). The relayer signals the workflow only when it refuses the call or its transaction
// reverts or is abandoned.
import { decodeEventLog, encodeEventTopics, padHex, type Hex } from 'viem';
import { paymentInfoHash } from '../domain/escrow.js';
import { escrowAbi } from '../domain/escrowAbi.js';
import { fromWire, tokenAllowanceAbi, type EscrowCall } from '../domain/escrowCall.js';
import type { RelayRequest } from '../domain/relay.js';
import type { EscrowEventName, EscrowOnchainRequest, EscrowOnchainResult } from '../domain/holds.js';
import type { ChainContext } from './chainContext.js';
import { heartbeat, lastHeartbeat, untilNextBlock, waitForDepth } from './heartbeat.js';

/** A call may be mined a few blocks before this activity first looks. */
const LOOK_BACK_BLOCKS = 8n;

interface Progress {
  fromBlock: string;
  seen?: { transactionHash: Hex; blockNumber: string; blockHash: Hex };
}

/** What each call ends with onchain: a void may meet the payer's reclaim first, which releases the same. */
const ENDS_WITH: Record<EscrowCall['action'], EscrowEventName[]> = {
  authorize: ['PaymentAuthorized'],
  capture: ['PaymentCaptured'],
  void: ['PaymentVoided', 'PaymentReclaimed'],
  refund: ['PaymentRefunded'],
  allowRefunds: ['Approval'],
};

export function createEscrowOnchainActivity(ctx: ChainContext, requestRelay: (request: RelayRequest) => Promise<void>) {
  return async function escrowOnchain(request: EscrowOnchainRequest): Promise<EscrowOnchainResult> {
    if (!ctx.escrow) throw new Error(`${ctx.network} has no escrow configured`);
    const escrow = ctx.escrow.escrow;
    const hash = paymentInfoHash(fromWire(request.call.paymentInfo), ctx.chainId, escrow);
    const wanted = ENDS_WITH[request.call.action];
    // What is looked for: the hold's own escrow events, or the token's Approval of the refund collector by the operator.
    const query: LogQuery =
      request.call.action === 'allowRefunds'
        ? {
            address: ctx.tokenAddress,
            topics: [approvalTopic, pad(request.call.paymentInfo.operator), pad(ctx.escrow.refundCollector)],
            abi: tokenAllowanceAbi,
          }
        : {
            address: escrow,
            topics: [wanted.map((eventName) => encodeEventTopics({ abi: escrowAbi, eventName: eventName as never })[0] as Hex), hash],
            abi: escrowAbi,
          };
    let progress = lastHeartbeat<Progress>();
    if (!progress) {
      const lowest = request.fromBlock !== undefined ? BigInt(request.fromBlock) : (await ctx.publicClient.getBlockNumber({ cacheTime: 0 })) - LOOK_BACK_BLOCKS;
      if (!request.followOnly)
        await requestRelay({
          requestId: request.requestId,
          replyTo: request.replyTo,
          sender: request.call.paymentInfo.operator,
          call: request.call,
          replyOn: 'failure',
        });
      progress = { fromBlock: (lowest > 0n ? lowest : 0n).toString() };
      heartbeat(progress);
    }
    const counted = new Set(request.counted.map((h) => h.toLowerCase()));
    for (;;) {
      const seen = await untilSeen(ctx, query, counted, BigInt(progress.fromBlock));
      progress = { ...progress, seen: { transactionHash: seen.transactionHash, blockNumber: seen.blockNumber, blockHash: seen.blockHash } };
      heartbeat(progress);
      // Depth, then the event read back at its block: a reorg shows as a moved or missing log.
      await waitForDepth(ctx, BigInt(seen.blockNumber));
      const again = (await logsOf(ctx, query, BigInt(seen.blockNumber), BigInt(seen.blockNumber))).find(
        (l) => l.transactionHash === seen.transactionHash && l.blockHash === seen.blockHash,
      );
      if (again) {
        const tx = await ctx.publicClient.getTransaction({ hash: seen.transactionHash });
        return { ...seen, paymentInfoHash: hash, by: ctx.isMerchant(tx.from) ? 'authcap' : 'onchain', confirmedAt: new Date().toISOString() };
      }
      progress = { fromBlock: progress.fromBlock };
      heartbeat(progress);
    }
  };
}

type Seen = Omit<EscrowOnchainResult, 'by' | 'confirmedAt' | 'paymentInfoHash'>;

interface LogQuery {
  address: Hex;
  topics: (Hex | Hex[])[];
  abi: typeof escrowAbi | typeof tokenAllowanceAbi;
}

const approvalTopic = encodeEventTopics({ abi: tokenAllowanceAbi, eventName: 'Approval' })[0]!;
const pad = (address: string) => padHex(address.toLowerCase() as Hex, { size: 32 });

async function untilSeen(ctx: ChainContext, query: LogQuery, counted: Set<string>, fromBlock: bigint): Promise<Seen> {
  for (;;) {
    const head = ctx.heads.head;
    const found = (await logsOf(ctx, query, fromBlock, 'pending')).find((l) => !counted.has(l.transactionHash.toLowerCase()));
    if (found) return found;
    await untilNextBlock(ctx, head);
  }
}

/** The events the query names, oldest first. */
async function logsOf(ctx: ChainContext, query: LogQuery, fromBlock: bigint, toBlock: bigint | 'pending'): Promise<Seen[]> {
  const logs = await ctx.logs.getLogs({ address: query.address, topics: query.topics as never, fromBlock, toBlock });
  // The log reader decodes the token's events only: the escrow's are decoded here.
  return logs.flatMap((log) => {
    if (log.removed || !log.transactionHash || log.blockNumber === null || !log.blockHash || log.topics.length === 0) return [];
    const decoded = decodeEventLog({ abi: query.abi, data: log.data, topics: log.topics as [Hex, ...Hex[]] });
    const amount = (decoded.args as { amount?: bigint }).amount ?? 0n;
    return [
      {
        event: decoded.eventName as EscrowEventName,
        amountMinor: amount.toString(),
        transactionHash: log.transactionHash,
        blockNumber: log.blockNumber.toString(),
        blockHash: log.blockHash,
      },
    ];
  });
}
