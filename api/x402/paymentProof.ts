// What makes a transaction this x402 payment: the token's Transfer of its amount from the payer to its
// recipient, right after the AuthorizationUsed of its nonce (the token emits them in that order), in a
// successful transaction. Another authorization of the payer's under the same nonce never passes.
import { parseEventLogs, type Hash, type PublicClient } from 'viem';
import { tokenAbi } from '../../domain/tokenAbi.js';
import type { X402Payment } from './payment.js';

export async function paidIn(client: PublicClient, payment: X402Payment, hash: Hash, usedLogIndex: number): Promise<boolean> {
  const receipt = await client.getTransactionReceipt({ hash });
  if (receipt.status !== 'success') return false;
  const { from, to, value } = payment.authorization;
  return parseEventLogs({ abi: tokenAbi, logs: receipt.logs, eventName: 'Transfer' }).some(
    (t) =>
      t.address.toLowerCase() === payment.token.address.toLowerCase() &&
      t.logIndex === usedLogIndex + 1 &&
      t.args.from?.toLowerCase() === from.toLowerCase() &&
      t.args.to?.toLowerCase() === to.toLowerCase() &&
      t.args.value === BigInt(value),
  );
}
