// The only transactions the merchant key sends: the configured token's EIP-3009 calls, built here
// from typed requests, each checked against what it concerns first. Nothing reaches the key as raw
// calldata, so whoever can put a request before the relayer can at most ask for a capture to the
// merchant, a payer's cancellation, or a refund its capture backs: never a transfer of their choosing.
import { BaseError, TransactionReceiptNotFoundError, encodeFunctionData, parseEventLogs, type Address, type Hex } from 'viem';
import { consumedBy, type RelayCall, type RefundCall } from '../domain/relay.js';
import { holdNonce, paymentInfoHash } from '../domain/escrow.js';
import { escrowAbi } from '../domain/escrowAbi.js';
import { escrowCalldata, escrowCallRefusal, fromWire, REFUNDS_ALLOWED, tokenAllowanceAbi, type EscrowCall } from '../domain/escrowCall.js';
import { pairKey } from '../domain/eip3009.js';
import { MAX_REFUNDS_PER_AUTHORIZATION } from '../domain/refunds.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import type { ChainContext } from './chainContext.js';
import { CAPTURE_GAS_LIMIT } from '../runtime/chain/captureGas.js';
import { refundNonce } from './refundNonce.js';
import { isRefundPlace, landedRefunds } from './refundsOnchain.js';
import { cancelCall, captureCall } from './tokenCalls.js';

const CANCEL_GAS_LIMIT = 100_000n;

export interface BuiltTransaction {
  to: Address;
  data: Hex;
  gas: bigint;
}

export type BuildResult = { transaction: BuiltTransaction } | { refused: string };

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The merchant's transaction for a typed call, or why the relayer will not send it. */
export async function buildRelayTransaction(ctx: ChainContext, sender: Address, call: RelayCall, backing: RefundBackingCheck): Promise<BuildResult> {
  // A call whose fields do not make a token call is refused: thrown, it would fail the relayer's
  // batch over and over and hold up every capture queued behind it.
  const malformed = malformedCall(call);
  if (malformed) return { refused: malformed };
  switch (call?.kind) {
    case 'capture': {
      // A capture pays the merchant key that sends it: receive… insists on it, transfer… would not.
      if (!same(call.authorization.to, sender))
        return { refused: `a capture must pay the merchant key that sends it (${sender}), not ${call.authorization.to}` };
      const c = captureCall(call, ctx.tokenAddress);
      return { transaction: { to: ctx.tokenAddress, data: encodeFunctionData(c), gas: CAPTURE_GAS_LIMIT } };
    }
    case 'cancel': {
      const c = cancelCall(call, ctx.tokenAddress);
      return { transaction: { to: ctx.tokenAddress, data: encodeFunctionData(c), gas: CANCEL_GAS_LIMIT } };
    }
    case 'refund': {
      const why = await backing.check(sender, call);
      if (why) return { refused: why };
      const c = captureCall({ primaryType: 'TransferWithAuthorization', authorization: call.authorization, signature: call.signature }, ctx.tokenAddress);
      return { transaction: { to: ctx.tokenAddress, data: encodeFunctionData(c), gas: CAPTURE_GAS_LIMIT } };
    }
    case 'escrow':
      return buildEscrowTransaction(ctx, sender, call);
    default:
      return { refused: 'the relayer sends only captures, cancellations, refunds and escrow calls' };
  }
}

/**
 * A held payment's call to its network's escrow: the operator's, paying the operator, no fee, its
 * authorize under the hold's own nonce; sent only while the escrow still says what the requester
 * expects of the hold (a capture or refund already landed, or pooled, is never sent twice).
 */
async function buildEscrowTransaction(ctx: ChainContext, sender: Address, call: EscrowCall): Promise<BuildResult> {
  if (!ctx.escrow) return { refused: `${ctx.network} has no escrow configured: it holds no funds` };
  const why = escrowCallRefusal(call, sender, ctx.tokenAddress);
  if (why) return { refused: why };
  const info = fromWire(call.paymentInfo);
  if (call.action === 'authorize' && !same(call.nonce ?? '', holdNonce(info, ctx.chainId, ctx.escrow.escrow)))
    return { refused: "an authorize's nonce must be its terms' hash (the payer signed exactly these terms)" };
  if (call.action === 'allowRefunds') {
    const allowance = await ctx.publicClient.readContract({
      address: ctx.tokenAddress,
      abi: tokenAllowanceAbi,
      functionName: 'allowance',
      args: [sender, ctx.escrow.refundCollector],
      blockTag: 'pending',
    });
    if (allowance >= REFUNDS_ALLOWED) return { refused: 'refunds through the escrow are allowed already' };
    return { transaction: { to: ctx.tokenAddress, data: escrowCalldata(call, ctx.escrow), gas: ESCROW_GAS_LIMITS.allowRefunds } };
  }
  if (call.expect) {
    const [, capturable, refundable] = await ctx.publicClient.readContract({
      address: ctx.escrow.escrow,
      abi: escrowAbi,
      functionName: 'paymentState',
      args: [paymentInfoHash(info, ctx.chainId, ctx.escrow.escrow)],
      blockTag: 'pending',
    });
    const { expect } = call;
    if (
      (expect.capturable !== undefined && BigInt(expect.capturable) !== capturable) ||
      (expect.refundable !== undefined && BigInt(expect.refundable) !== refundable)
    )
      return { refused: `the hold changed onchain: ${capturable} capturable and ${refundable} refundable, not as expected (${JSON.stringify(expect)})` };
  }
  return { transaction: { to: ctx.escrow.escrow, data: escrowCalldata(call, ctx.escrow), gas: ESCROW_GAS_LIMITS[call.action] } };
}

/** Generous over what each escrow call measures (test/bench holds row), so a fee spike is the only reason to run out. */
const ESCROW_GAS_LIMITS: Record<EscrowCall['action'], bigint> = {
  authorize: 300_000n,
  capture: 200_000n,
  void: 150_000n,
  refund: 200_000n,
  allowRefunds: 100_000n,
};

/**
 * What two requests of one batch must not share: the authorization a call consumes, or for an
 * escrow call its hold (both would pass alone at the pending block; the second must wait for the first).
 */
export function claimKeyOf(ctx: ChainContext, call: RelayCall): string {
  if (call.kind === 'escrow' && ctx.escrow && call.action === 'allowRefunds')
    return `allow:${ctx.tokenAddress.toLowerCase()}:${call.paymentInfo.operator.toLowerCase()}`;
  if (call.kind === 'escrow' && ctx.escrow) return `hold:${paymentInfoHash(fromWire(call.paymentInfo), ctx.chainId, ctx.escrow.escrow)}`;
  const consumes = consumedBy(call);
  return consumes ? `${ctx.tokenAddress.toLowerCase()}:${pairKey(consumes.authorizer, consumes.nonce)}` : `call:${JSON.stringify(call)}`;
}

const HEX32 = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^(0|[1-9][0-9]{0,77})$/;
const SIGNATURE = /^0x(?:[0-9a-fA-F]{2})+$/;

/**
 * Why these typed arguments make no token call, or undefined. The calldata is built from exactly
 * these fields (from, to, value, validAfter, validBefore, nonce: what the signature covers), so a
 * well-formed call is the one its authorization asks for; whether the signature is the authorizer's
 * the token itself judges, in the simulation before broadcast (a contract wallet's ERC-1271
 * signature does not recover to its address, so a local recovery could only refuse it wrongly).
 */
function malformedCall(call: RelayCall): string | undefined {
  if (typeof call !== 'object' || call === null) return 'no call';
  // An escrow call is checked whole by escrowCallRefusal (only its authorize carries a signature).
  if (call.kind === 'escrow') return undefined;
  if (typeof call.signature !== 'string' || !SIGNATURE.test(call.signature)) return 'a call must carry its signature';
  if (call.kind === 'cancel') {
    if (typeof call.authorizer !== 'string' || !ADDRESS.test(call.authorizer)) return 'a cancellation names its authorizer';
    if (typeof call.nonce !== 'string' || !HEX32.test(call.nonce)) return "a cancellation names the authorization's 32-byte nonce";
    return undefined;
  }
  if (call.kind !== 'capture' && call.kind !== 'refund') return undefined;
  if (call.kind === 'capture' && call.primaryType !== 'ReceiveWithAuthorization' && call.primaryType !== 'TransferWithAuthorization')
    return `a capture is a ReceiveWithAuthorization or a TransferWithAuthorization, not ${String(call.primaryType)}`;
  const a = call.authorization;
  if (typeof a !== 'object' || a === null) return 'a call must carry its authorization';
  if (![a.from, a.to].every((x) => typeof x === 'string' && ADDRESS.test(x))) return "an authorization's from and to are addresses";
  if (![a.value, a.validAfter, a.validBefore].every((x) => typeof x === 'string' && UINT.test(x))) return "an authorization's value and validity are integers";
  if (typeof a.nonce !== 'string' || !HEX32.test(a.nonce)) return "an authorization's nonce is 32 bytes";
  return undefined;
}

export interface RefundBackingCheck {
  /** Undefined when the refund is backed; otherwise why not. */
  check(merchant: Address, refund: Pick<RefundCall, 'authorization' | 'refund'>): Promise<string | undefined>;
}

/** What a capture's receipt proves: who paid whom, how much, and in which block. */
interface CaptureFacts {
  payer: Address;
  payee: Address;
  value: bigint;
  blockNumber: bigint;
}

/**
 * A refund gives back from one capture: it goes from the merchant key that received the capture to
 * the payer who paid it, under the nonce of its own place, and with the refunds of that capture that
 * already landed it gives back no more than the capture moved. The capture's receipt proves the
 * payer and the amount (read once per capture and kept: it is final at depth); the chain shows which
 * refunds landed (refundsOnchain.ts). The refunds workflow keeps the same sum in its ledger, but a
 * ledger can be rewound by a reset: the chain cannot.
 */
export function refundBackingCheck(ctx: ChainContext): RefundBackingCheck {
  const captures = new Map<Hex, Promise<CaptureFacts | undefined>>();
  const captureOf = (hash: Hex) => {
    let found = captures.get(hash);
    if (!found) {
      found = readCapture(ctx, hash);
      captures.set(hash, found);
      // A miss (not mined yet, a node hiccup) is asked again next time; a hit is kept, a few thousand at most.
      void found.then(
        (capture) => {
          if (!capture) captures.delete(hash);
          if (captures.size > 5_000) captures.delete(captures.keys().next().value!);
        },
        () => captures.delete(hash),
      );
    }
    return found;
  };
  return {
    async check(merchant, { authorization, refund }) {
      if (!same(authorization.from, merchant)) return `a refund is sent from the merchant key that signs it (${merchant}), not ${authorization.from}`;
      // A place outside 0..MAX would be a nonce the sum below never counts.
      if (!isRefundPlace(refund.sequence)) return `a refund's sequence is a whole number from 0 to ${MAX_REFUNDS_PER_AUTHORIZATION}, not ${refund.sequence}`;
      if (!same(authorization.nonce, refundNonce(refund.authorizationRunId, refund.sequence)))
        return `a refund's nonce must be the one derived from its place (${refund.authorizationRunId}, ${refund.sequence})`;
      if (!refund.captureTransactionHash) return 'a refund must name the capture it gives back from';
      const capture = await captureOf(refund.captureTransactionHash);
      if (!capture) return `no capture by ${merchant} in transaction ${refund.captureTransactionHash}`;
      if (!same(capture.payee, merchant)) return `the capture ${refund.captureTransactionHash} paid ${capture.payee}, not this merchant key`;
      if (!same(capture.payer, authorization.to)) return `a refund goes back to the payer of its capture (${capture.payer}), not ${authorization.to}`;
      if (BigInt(authorization.value) > capture.value) return `a refund of ${authorization.value} is more than its capture moved (${capture.value})`;
      const landed = await landedRefunds(ctx, {
        merchant,
        payer: capture.payer,
        authorizationRunId: refund.authorizationRunId,
        fromBlock: capture.blockNumber,
        except: refund.sequence,
      });
      const given = landed.reduce((sum, r) => sum + r.value, 0n);
      if (given + BigInt(authorization.value) > capture.value) {
        const which = landed.filter((r) => r.value > 0n).map((r) => `${r.sequence}: ${r.value} in ${r.transactionHash}`);
        return (
          `refunds of this capture already moved ${given} onchain (${which.join(', ')}); with this one of ${authorization.value} ` +
          `they would give back more than the capture moved (${capture.value})`
        );
      }
      return undefined;
    },
  };
}

/** The payer and amount of a capture, from its receipt: an AuthorizationUsed and the Transfer it made. */
async function readCapture(ctx: ChainContext, hash: Hex): Promise<CaptureFacts | undefined> {
  // Not mined (yet) is no capture; a node that did not answer is no verdict: the error goes up and
  // the step is retried, never turned into a refusal, which would fail a refund for good.
  const receipt = await ctx.publicClient.getTransactionReceipt({ hash }).catch((err: unknown) => {
    if (err instanceof BaseError && err.walk((e) => e instanceof TransactionReceiptNotFoundError)) return undefined;
    throw err;
  });
  if (receipt?.status !== 'success') return undefined;
  const logs = parseEventLogs({ abi: tokenAbi, logs: receipt.logs.filter((l) => same(l.address, ctx.tokenAddress)) });
  const used = logs.find((l) => l.eventName === 'AuthorizationUsed');
  if (used?.eventName !== 'AuthorizationUsed') return undefined;
  const payer = used.args.authorizer;
  const transfer = logs.find((l) => l.eventName === 'Transfer' && same(l.args.from, payer) && ctx.isMerchant(l.args.to));
  if (transfer?.eventName !== 'Transfer') return undefined;
  return { payer, payee: transfer.args.to, value: transfer.args.value, blockNumber: receipt.blockNumber };
}
