// The bench's own audit: every run must leave the chain as exactly-once promises. Each nonce used
// once (one AuthorizationUsed per authorizer and nonce), every capture authcap reported is a mined
// log, and the merchant sent exactly one transaction per capture and per refund (no duplicates, no
// strays). Refunds (a partial capture's release included) are audited by test/bench/refundAudit.ts.
import { createPublicClient, getAbiItem, http, type Address, type Hex } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { auditRefunds, type AuditedRefund, type RefundAuditFindings } from './refundAudit.js';

export interface ExactlyOnceFindings {
  authorizationUsedLogs: number;
  duplicateNonces: number;
  authcapCaptures: number;
  authcapCapturesWithoutLog: number;
  merchantTransactions: number;
  /** Present when the run refunded: each succeeded refund's own logs, and the merchant's Transfer sum. */
  refunds?: RefundAuditFindings;
  ok: boolean;
}

export async function merchantNonce(rpcUrl: string, merchant: Address): Promise<number> {
  return createPublicClient({ transport: http(rpcUrl) }).getTransactionCount({ address: merchant, blockTag: 'latest' });
}

export async function auditExactlyOnce(options: {
  rpcUrl: string;
  tokenAddress: Address;
  fromBlock: bigint;
  authcapCaptureHashes: Hex[];
  merchantNonceBefore: number;
  merchant: Address;
  /** Refunds authcap reported succeeded (each is one merchant transaction too). */
  refunds?: AuditedRefund[];
}): Promise<ExactlyOnceFindings> {
  const client = createPublicClient({ transport: http(options.rpcUrl) });
  const logs = await client.getLogs({
    address: options.tokenAddress,
    event: getAbiItem({ abi: tokenAbi, name: 'AuthorizationUsed' }),
    fromBlock: options.fromBlock,
    toBlock: 'latest',
  });
  const seen = new Map<string, number>();
  for (const log of logs) {
    const key = `${log.args.authorizer}:${log.args.nonce}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const logged = new Set(logs.map((l) => l.transactionHash));
  const duplicateNonces = [...seen.values()].filter((n) => n > 1).length;
  const authcapCapturesWithoutLog = options.authcapCaptureHashes.filter((h) => !logged.has(h)).length;
  const merchantTransactions = (await merchantNonce(options.rpcUrl, options.merchant)) - options.merchantNonceBefore;
  const distinctCaptures = new Set(options.authcapCaptureHashes).size;
  const refunds = options.refunds?.length
    ? await auditRefunds({
        client,
        tokenAddress: options.tokenAddress,
        fromBlock: options.fromBlock,
        merchant: options.merchant,
        usedLogs: logs,
        refunds: options.refunds,
      })
    : undefined;
  return {
    authorizationUsedLogs: logs.length,
    duplicateNonces,
    authcapCaptures: options.authcapCaptureHashes.length,
    authcapCapturesWithoutLog,
    merchantTransactions,
    ...(refunds ? { refunds } : {}),
    ok:
      duplicateNonces === 0 &&
      authcapCapturesWithoutLog === 0 &&
      distinctCaptures === options.authcapCaptureHashes.length &&
      merchantTransactions === options.authcapCaptureHashes.length + (options.refunds?.length ?? 0) &&
      (refunds?.ok ?? true),
  };
}
