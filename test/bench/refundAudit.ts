// The refunds' part of the exactly-once audit. A refund is the merchant's own EIP-3009
// transferWithAuthorization under a nonce derived from the refund's place, so the chain itself says
// whether it was paid once: every refund authcap reported succeeded (a partial capture's release
// included) has exactly one AuthorizationUsed(merchant, its nonce), in the transaction authcap
// reported, holding exactly one Transfer(merchant → payer) of its amount; and everything the
// merchant key transferred in the run sums to what authcap says it gave back (the bench moves
// nothing else out of the merchant key).
import { getAbiItem, type Address, type Hex, type PublicClient } from 'viem';
import { refundNonce } from '../../activities/refund.js';
import { parseRefundId } from '../../domain/refunds.js';
import { tokenAbi } from '../../domain/tokenAbi.js';

export interface AuditedRefund {
  /** The refund's id (ref_…): names the authorization run and sequence its nonce derives from. */
  id: string;
  payer: Address;
  amountMinor: bigint;
  transactionHash: Hex;
}

export interface RefundAuditFindings {
  /** Succeeded refunds audited (releases of partial captures included). */
  refunds: number;
  /** Refunds whose (merchant, nonce) is not used exactly once, or not in the reported transaction. */
  withoutOneUse: number;
  /** Refunds whose transaction lacks exactly one Transfer(merchant → payer) of the refund's amount. */
  withoutTransfer: number;
  /** What authcap reported refunded, and what the merchant key's Transfer logs moved, minor units. */
  refundedMinor: string;
  transferredMinor: string;
  ok: boolean;
}

type UsedLog = { args: { authorizer?: Address; nonce?: Hex }; transactionHash: Hex | null };

export async function auditRefunds(options: {
  client: Pick<PublicClient, 'getLogs'>;
  tokenAddress: Address;
  fromBlock: bigint;
  merchant: Address;
  /** Every AuthorizationUsed log of the token since fromBlock (the capture audit already read them). */
  usedLogs: readonly UsedLog[];
  refunds: AuditedRefund[];
}): Promise<RefundAuditFindings> {
  const merchant = options.merchant.toLowerCase();
  const transfers = await options.client.getLogs({
    address: options.tokenAddress,
    event: getAbiItem({ abi: tokenAbi, name: 'Transfer' }),
    args: { from: options.merchant },
    fromBlock: options.fromBlock,
    toBlock: 'latest',
  });
  const usesOf = new Map<string, UsedLog[]>();
  for (const log of options.usedLogs) {
    if (log.args.authorizer?.toLowerCase() !== merchant) continue;
    const key = log.args.nonce?.toLowerCase() ?? '';
    usesOf.set(key, [...(usesOf.get(key) ?? []), log]);
  }
  let withoutOneUse = 0;
  let withoutTransfer = 0;
  let refunded = 0n;
  for (const refund of options.refunds) {
    refunded += refund.amountMinor;
    const place = parseRefundId(refund.id);
    const uses = place ? (usesOf.get(refundNonce(place.authorizationRunId, place.sequence).toLowerCase()) ?? []) : [];
    if (uses.length !== 1 || uses[0]!.transactionHash !== refund.transactionHash) withoutOneUse += 1;
    const own = transfers.filter((t) => t.transactionHash === refund.transactionHash);
    const paid = own.filter((t) => t.args.to?.toLowerCase() === refund.payer.toLowerCase() && t.args.value === refund.amountMinor);
    if (own.length !== 1 || paid.length !== 1) withoutTransfer += 1;
  }
  const transferred = transfers.reduce((sum, t) => sum + (t.args.value ?? 0n), 0n);
  return {
    refunds: options.refunds.length,
    withoutOneUse,
    withoutTransfer,
    refundedMinor: refunded.toString(),
    transferredMinor: transferred.toString(),
    ok: withoutOneUse === 0 && withoutTransfer === 0 && refunded === transferred,
  };
}
