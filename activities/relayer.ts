// The merchant key's transactions, signed with nonces the relayer workflow hands out one batch at a
// time. Only that workflow (one per merchant, single-threaded by Temporal) calls these, so nonces
// never collide across captures or worker processes. A batch stops at its first refusal, so no
// nonce is ever skipped: a gap would block every later capture.
import { keccak256, type Address, type Hex, type LocalAccount } from 'viem';
import {
  consumedBy,
  isTypedRelayRequest,
  type BroadcastOutcome,
  type InflightReport,
  type InflightTransaction,
  type RelayRequest,
  type RelayResult,
  type RelayerActivities,
} from '../domain/relay.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';
import { heartbeat, lastHeartbeat } from './heartbeat.js';
import { isRevert, revertReasonOf } from '../runtime/chain/revert.js';
import { cancelFailureFromRevert, captureFailureFromRevert } from './revert.js';
import { authorizationCanceledTopic, logPairKey, nonceTopics } from './nonceState.js';
import { pairKey } from '../domain/eip3009.js';
import type { CaptureFailure } from '../domain/facts.js';
import { classifyRpcError } from './rpc/rpcErrors.js';
import { buildRelayTransaction, claimKeyOf, refundBackingCheck, type BuiltTransaction, type RefundBackingCheck } from './relayCalls.js';

/** Replacement must pay at least 10% more (geth's rule); 25% clears every client's threshold. */
const FEE_BUMP_PERCENT = 125n;
/** Never pay more than this many bumps (1.25^5 ≈ 3×): past it, wait, or let the deadline decide. */
export const MAX_FEE_BUMPS = 5;
/** Blocks on top of a mined transaction before the relayer stops watching it (reorg safety). */
export const SETTLE_DEPTH = 64n;
/**
 * How far back the relayer looks for the transaction that consumed a request's authorization (one
 * eth_getLogs window): a request asked again after the relayer lost its memory comes within minutes.
 * Older ones are answered nonce_already_used, and their requester reads the chain itself.
 */
export const ANSWER_LOOKBACK_BLOCKS = 1_999n;
/** Out of gas in the simulation is a final answer (the transaction would fail the same way), not a node fault. */
const OUT_OF_GAS = /out of gas|gas required exceeds|intrinsic gas too low/i;

/** What a broadcast attempt heartbeats: what it signed, and what it answered without a transaction. */
interface SignedBatch {
  signed: InflightTransaction[];
  refused: BroadcastOutcome['refused'];
  known: RelayResult[];
}

/** A simulation's verdict: undefined (send it), a refusal, or the transaction that answered it already. */
type Verdict = { failure: CaptureFailure } | { known: RelayResult } | undefined;

/**
 * `tokenContext`: the context of another token on the same network (a relayer sends for each of its
 * network's tokens); undefined for a token the network does not serve, which is refused.
 */
export function createRelayerActivities(ctx: ChainContext, tokenContext: (token?: Address) => ChainContext | undefined = () => ctx): RelayerActivities {
  const backings = new Map<ChainContext, RefundBackingCheck>();
  const backingOf = (tokenCtx: ChainContext) => {
    let check = backings.get(tokenCtx);
    if (!check) backings.set(tokenCtx, (check = refundBackingCheck(tokenCtx)));
    return check;
  };
  async function sign(
    account: LocalAccount,
    tx: { to: InflightTransaction['to']; data: Hex; gas: bigint; nonce: number; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  ) {
    // The local key signs directly: the wallet client would first ask the node for its chain id.
    const raw = await account.signTransaction({ ...tx, chainId: ctx.walletClient.chain.id, type: 'eip1559' });
    return { raw, hash: keccak256(raw) };
  }

  async function isKnown(hash: Hex): Promise<boolean> {
    return ctx.publicClient.getTransaction({ hash }).then(
      () => true,
      () => false,
    );
  }

  async function relayerAccountNonce(request?: { sender?: Address }): Promise<number> {
    // `pending` counts preconfirmed and pooled transactions too: the next free nonce.
    return ctx.publicClient.getTransactionCount({ address: ctx.accountFor(request?.sender).address, blockTag: 'pending' });
  }

  async function broadcastBatch(request: { startNonce: number; items: RelayRequest[]; sentAt: number; sender?: Address }): Promise<BroadcastOutcome> {
    const account = ctx.accountFor(request.sender);
    // A retried attempt rebroadcasts exactly what it signed before, never a second set of
    // transactions, and gives the answers it reached without a transaction again.
    const prior = lastHeartbeat<SignedBatch>();
    let signed = prior?.signed;
    let refused: BroadcastOutcome['refused'] = prior?.refused ?? [];
    let known: RelayResult[] = prior?.known ?? [];
    if (!signed?.length) {
      refused = [];
      known = [];
      // Each call is built and checked before any nonce is given out: a refused one takes none.
      const built: { item: RelayRequest; tokenCtx: ChainContext; transaction: BuiltTransaction }[] = [];
      for (const item of request.items) {
        const tokenCtx = isTypedRelayRequest(item) ? tokenContext(item.token) : undefined;
        const result = !isTypedRelayRequest(item)
          ? { refused: 'raw calldata is not relayed: the relayer builds every call itself' }
          : item.network !== undefined && item.network !== ctx.network
            ? { refused: `a request for ${item.network} is not sent on ${ctx.network}` }
            : !tokenCtx
              ? { refused: `token ${item.token} is not served on ${ctx.network}` }
              : await buildRelayTransaction(tokenCtx, account.address, item.call, backingOf(tokenCtx));
        if ('refused' in result)
          refused.push({ requestId: item.requestId, failure: { code: 'relay_refused', message: `the relayer refused: ${result.refused}` } });
        else built.push({ item: item as RelayRequest, tokenCtx: tokenCtx!, transaction: result.transaction });
      }
      // Then each is run at the pending block, as the merchant key would send it (together: one
      // eth_call each). The relayer's memory of its answers is a workflow's, which an operator's
      // reset or anyone's termination wipes: the chain's is not. A call whose authorization is
      // already used or canceled, or that would revert for any other reason, is never broadcast.
      const verdicts = await Promise.all(built.map(({ item, tokenCtx, transaction }) => simulate(tokenCtx, account.address, item, transaction)));
      const claimed = new Map<string, string>();
      const sendable: typeof built = [];
      for (const [i, b] of built.entries()) {
        const verdict = verdicts[i]!;
        if (verdict && 'known' in verdict) known.push(verdict.known);
        else if (verdict) refused.push({ requestId: b.item.requestId, failure: verdict.failure });
        else {
          // Two requests of one batch for one authorization (a capture and its cancellation, say):
          // both pass alone at the pending block, and the second would revert behind the first.
          const pair = claimKeyOf(b.tokenCtx, b.item.call);
          const first = claimed.get(pair);
          if (first) {
            refused.push({
              requestId: b.item.requestId,
              failure: { code: 'nonce_already_used', message: `the relayer sent nothing: request ${first} consumes the same authorization, sent just before` },
            });
          } else {
            claimed.set(pair, b.item.requestId);
            sendable.push(b);
          }
        }
      }
      // The relayer workflow keeps the count (it re-reads the chain whenever nothing of ours is in
      // flight). Should the chain be ahead (another tool used the key), the node answers "nonce too
      // low" below and the batch is signed again from the chain's count.
      const start = request.startNonce;
      const fees = sendable.length > 0 ? await ctx.feesPerGas() : undefined;
      signed = [];
      for (const [i, { item, tokenCtx, transaction }] of sendable.entries()) {
        const tx = { ...transaction, nonce: start + i, maxFeePerGas: fees!.maxFeePerGas, maxPriorityFeePerGas: fees!.maxPriorityFeePerGas };
        const { raw, hash } = await sign(account, tx);
        signed.push({
          requestId: item.requestId,
          replyTo: item.replyTo,
          accountNonce: tx.nonce,
          hash,
          raw,
          to: transaction.to,
          data: transaction.data,
          gas: transaction.gas.toString(),
          maxFeePerGas: fees!.maxFeePerGas.toString(),
          maxPriorityFeePerGas: fees!.maxPriorityFeePerGas.toString(),
          ...consumedBy(item.call),
          // An escrow's authorize consumes the payer's authorization at the token, not at the escrow it is sent to.
          ...(item.call.kind === 'escrow' && item.call.action === 'authorize' ? { consumedAt: tokenCtx.tokenAddress } : {}),
          sentAt: request.sentAt,
          ...(item.replyOn ? { replyOn: item.replyOn } : {}),
        });
      }
      heartbeat({ signed, refused, known } satisfies SignedBatch);
    }
    const outcome: BroadcastOutcome = {
      sent: [],
      refused,
      retry: [],
      nextAccountNonce: signed[0]?.accountNonce ?? request.startNonce,
      known,
    };
    for (const [i, tx] of signed.entries()) {
      try {
        await ctx.publicClient.sendRawTransaction({ serializedTransaction: tx.raw });
      } catch (err) {
        const message = String((err as Error).message);
        if (/nonce too low|nonce has already been used|replacement transaction underpriced|already known|known transaction|already imported/i.test(message)) {
          // A retried attempt: is this exact transaction already in the pool or mined? Then it was sent.
          // Otherwise another transaction took the nonce: re-sign the rest from the chain's count.
          if (await isKnown(tx.hash)) {
            outcome.sent.push(tx);
            outcome.nextAccountNonce = tx.accountNonce + 1;
            continue;
          }
          outcome.retry.push(...signed.slice(i).map((t) => t.requestId));
          outcome.nextAccountNonce = await relayerAccountNonce(request);
          return outcome;
        }
        if (classifyRpcError(err) === 'retryable') throw err;
        // Refused (not a transient fault): this nonce stays free, and the rest wait for the next batch.
        outcome.refused.push({
          requestId: tx.requestId,
          failure: { code: 'capture_reverted', message: `the node refused the transaction: ${revertReasonOf(err) ?? message.split('\n')[0]}` },
        });
        outcome.retry.push(...signed.slice(i + 1).map((t) => t.requestId));
        return outcome;
      }
      outcome.sent.push(tx);
      outcome.nextAccountNonce = tx.accountNonce + 1;
    }
    return outcome;
  }

  /**
   * The call run at the pending block from the merchant key with the gas it would be sent with:
   * undefined when it would succeed; otherwise what to answer instead of a transaction. One eth_call
   * per request; the chain is read further only for a call that would revert.
   */
  async function simulate(tokenCtx: ChainContext, sender: Address, item: RelayRequest, transaction: BuiltTransaction): Promise<Verdict> {
    try {
      await tokenCtx.publicClient.call({ account: sender, to: transaction.to, data: transaction.data, gas: transaction.gas, blockTag: 'pending' });
      return undefined;
    } catch (err) {
      const kind = classifyRpcError(err);
      // A node that did not answer is no verdict: the batch is tried again, nothing refused for good.
      if (kind === 'retryable' && !OUT_OF_GAS.test(String((err as Error)?.message ?? err))) throw err;
      const spent = await consumedAnswer(tokenCtx, sender, item);
      if (spent) return spent;
      const reason = revertReasonOf(err) ?? String((err as Error)?.message ?? err).split('\n')[0];
      const failure = item.call.kind === 'cancel' ? cancelFailureFromRevert(err) : captureFailureFromRevert(err);
      return { failure: { code: failure.code, message: `the relayer sent nothing: at the pending block the ${item.call.kind} would revert (${reason})` } };
    }
  }

  /**
   * For a call that would revert: is its authorization's nonce used or canceled (authorizationState
   * at the pending block)? Then either this merchant key's own transaction of the same kind consumed
   * it (found by its log among the last blocks), and that transaction is the answer it was given
   * before, or something else did, and the answer is nonce_already_used: the requester reconciles
   * from the chain. Never a success that is not one.
   */
  async function consumedAnswer(tokenCtx: ChainContext, sender: Address, item: RelayRequest): Promise<Verdict> {
    const consumes = consumedBy(item.call);
    // An escrow capture, void or refund consumes no authorization: its own revert is the answer.
    if (!consumes) return undefined;
    const { authorizer, nonce } = consumes;
    const consumed = await tokenCtx.publicClient.readContract({
      address: tokenCtx.tokenAddress,
      abi: tokenAbi,
      functionName: 'authorizationState',
      args: [authorizer, nonce],
      blockTag: 'pending',
    });
    if (!consumed) return undefined;
    const head = tokenCtx.heads.head ?? (await tokenCtx.publicClient.getBlockNumber({ cacheTime: 0 }));
    const logs = await tokenCtx.logs.getLogs({
      address: tokenCtx.tokenAddress,
      topics: nonceTopics(authorizer, nonce),
      fromBlock: head > ANSWER_LOOKBACK_BLOCKS ? head - ANSWER_LOOKBACK_BLOCKS : 0n,
      toBlock: 'pending',
    });
    const log = logs.find((l) => !l.removed && logPairKey(l) === pairKey(authorizer, nonce));
    const status = log ? (log.topics[0] === authorizationCanceledTopic ? 'canceled' : 'used') : undefined;
    if (log?.transactionHash && status === (item.call.kind === 'cancel' ? 'canceled' : 'used')) {
      const tx = await tokenCtx.publicClient.getTransaction({ hash: log.transactionHash }).catch(() => undefined);
      if (tx && tx.from.toLowerCase() === sender.toLowerCase())
        return { known: { requestId: item.requestId, transactionHash: tx.hash, accountNonce: tx.nonce } };
    }
    return {
      failure: {
        code: 'nonce_already_used',
        message: `the relayer sent nothing: the authorization's nonce is already ${status ?? 'used or canceled'} onchain${log?.transactionHash ? ` in ${log.transactionHash}` : ''}`,
      },
    };
  }

  async function inspectInflight(request: { inflight: InflightTransaction[]; now: number; stuckAfterMs: number; sender?: Address }): Promise<InflightReport> {
    const account = ctx.accountFor(request.sender);
    const report: InflightReport = { settled: [], resent: [], abandoned: [] };
    if (request.inflight.length === 0) return report;
    // A transaction is forgotten only once it is buried SETTLE_DEPTH blocks deep: one that a reorg
    // takes away must still be watched, so the dropped-transaction path below sends it again.
    const head = await ctx.publicClient.getBlockNumber({ cacheTime: 0 });
    const [buried, mined] = await Promise.all([
      head > SETTLE_DEPTH ? ctx.publicClient.getTransactionCount({ address: account.address, blockNumber: head - SETTLE_DEPTH }) : Promise.resolve(0),
      ctx.publicClient.getTransactionCount({ address: account.address, blockNumber: head }),
    ]);
    for (const tx of request.inflight) {
      // A requester answered only on failure follows the chain for success; a revert it hears of here.
      if (tx.replyOn === 'failure' && !tx.checked && tx.accountNonce < mined) {
        const receipt = await ctx.publicClient.getTransactionReceipt({ hash: tx.hash }).catch(() => undefined);
        (report.checked ??= []).push({
          requestId: tx.requestId,
          ...(receipt?.status === 'reverted' ? { failure: await whyReverted(account.address, tx, receipt.blockNumber) } : {}),
        });
      }
      if (tx.accountNonce < buried) {
        report.settled.push(tx.requestId);
        continue;
      }
      if (tx.accountNonce < mined) continue;
      if (request.now - tx.sentAt < request.stuckAfterMs) continue;
      const known = await isKnown(tx.hash);
      if (known && (tx.bumps ?? 0) >= MAX_FEE_BUMPS) continue;
      if (known) {
        // Stuck in the pool: the same transaction again, paying more, under the same nonce.
        const maxFeePerGas = (BigInt(tx.maxFeePerGas) * FEE_BUMP_PERCENT) / 100n;
        const maxPriorityFeePerGas = (BigInt(tx.maxPriorityFeePerGas) * FEE_BUMP_PERCENT) / 100n;
        const { raw, hash } = await sign(account, {
          to: tx.to,
          data: tx.data,
          gas: BigInt(tx.gas),
          nonce: tx.accountNonce,
          maxFeePerGas,
          maxPriorityFeePerGas,
        });
        try {
          await ctx.publicClient.sendRawTransaction({ serializedTransaction: raw });
        } catch (err) {
          // Mined meanwhile ("nonce too low") or a competing replacement: the next look settles it.
          if (/nonce too low|already known|underpriced/i.test(String((err as Error).message))) continue;
          throw err;
        }
        report.resent.push({
          ...tx,
          raw,
          hash,
          maxFeePerGas: maxFeePerGas.toString(),
          maxPriorityFeePerGas: maxPriorityFeePerGas.toString(),
          sentAt: request.now,
          bumps: (tx.bumps ?? 0) + 1,
        });
        continue;
      }
      // Dropped from the pool. Resubmit only while the authorization is still unused. A call that
      // consumes none (an escrow capture, void or refund) goes again under its own account nonce: it
      // can land once at most, and the escrow judges it then.
      const consumed =
        tx.authorizer && tx.nonce
          ? await ctx.publicClient.readContract({
              // The token the authorization is of: the transaction's own contract, unless it says otherwise.
              address: tx.consumedAt ?? tx.to,
              abi: tokenAbi,
              functionName: 'authorizationState',
              args: [tx.authorizer, tx.nonce],
            })
          : false;
      if (!consumed) {
        await ctx.publicClient.sendRawTransaction({ serializedTransaction: tx.raw });
        report.resent.push({ ...tx, sentAt: request.now });
      } else {
        // Its account nonce must still be used, or every later transaction waits behind the gap.
        const fees = await ctx.feesPerGas();
        const filler = await sign(account, { to: account.address, data: '0x', gas: 21_000n, nonce: tx.accountNonce, ...fees });
        await ctx.publicClient.sendRawTransaction({ serializedTransaction: filler.raw });
        report.abandoned.push({
          requestId: tx.requestId,
          failure: { code: 'nonce_already_used', message: 'the authorization was consumed onchain while our transaction was dropped' },
        });
      }
    }
    return report;
  }

  /**
   * Why a mined transaction reverted: its call replayed on the state after its block (what made it
   * revert may have landed in the same block, before it), then before it; the token names the reason.
   */
  async function whyReverted(from: Address, tx: InflightTransaction, blockNumber: bigint): Promise<CaptureFailure> {
    for (const at of [blockNumber, blockNumber - 1n]) {
      try {
        await ctx.publicClient.call({ account: from, to: tx.to, data: tx.data, blockNumber: at });
      } catch (err) {
        if (isRevert(err)) return captureFailureFromRevert(err);
      }
    }
    return { code: 'capture_reverted', message: `transaction ${tx.hash} reverted onchain` };
  }

  return { relayerAccountNonce, broadcastBatch, inspectInflight };
}
