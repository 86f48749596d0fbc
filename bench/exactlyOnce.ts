// The bench's own audit: every run must leave the chain as exactly-once promises. Each nonce used
// once (one AuthorizationUsed per authorizer and nonce), every capture authcap reported is a mined
// log, and the merchant sent exactly one transaction per capture (no duplicates, no strays).
import { createPublicClient, getAbiItem, http, type Address, type Hex } from 'viem';
import { tokenAbi } from '../domain/tokenAbi.js';

export interface ExactlyOnceFindings {
  authorizationUsedLogs: number;
  duplicateNonces: number;
  authcapCaptures: number;
  authcapCapturesWithoutLog: number;
  merchantTransactions: number;
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
  return {
    authorizationUsedLogs: logs.length,
    duplicateNonces,
    authcapCaptures: options.authcapCaptureHashes.length,
    authcapCapturesWithoutLog,
    merchantTransactions,
    ok:
      duplicateNonces === 0 &&
      authcapCapturesWithoutLog === 0 &&
      distinctCaptures === options.authcapCaptureHashes.length &&
      merchantTransactions === options.authcapCaptureHashes.length,
  };
}
