// The start check of a network's escrow: the three addresses hold contracts, the collectors belong to
// this escrow and are the kinds their places say, and the escrow hashes payments with Commerce
// Payments' type hash (what a payer signs is then what it checks). A wrong address stops the start.
import { getAddress, type Address, type PublicClient } from 'viem';
import { PAYMENT_INFO_TYPEHASH } from '../../domain/escrow.js';
import { CollectorType, escrowAbi, tokenCollectorAbi } from '../../domain/escrowAbi.js';
import type { ServedEscrow, ServedToken } from './catalog.js';
import { DeploymentConfigError } from './load.js';
import type { NetworkConfig } from './schema.js';

type EscrowConfig = NonNullable<NetworkConfig['escrow']>;

export async function checkEscrow(client: PublicClient, config: EscrowConfig, tokens: readonly ServedToken[], where: string): Promise<ServedEscrow> {
  const escrow = getAddress(config.address);
  const paymentCollector = getAddress(config.paymentCollector);
  const refundCollector = getAddress(config.refundCollector);
  for (const [address, what] of [
    [escrow, 'escrow'],
    [paymentCollector, 'paymentCollector'],
    [refundCollector, 'refundCollector'],
  ] as const) {
    const code = await client.getCode({ address });
    if (!code || code === '0x') throw new DeploymentConfigError(`${where}: ${what} ${address}: no contract at this address on this network`);
  }
  const typeHash = await client.readContract({ address: escrow, abi: escrowAbi, functionName: 'PAYMENT_INFO_TYPEHASH' }).catch(() => undefined);
  if (typeHash !== PAYMENT_INFO_TYPEHASH)
    throw new DeploymentConfigError(`${where}: escrow ${escrow} is not an AuthCaptureEscrow (its PaymentInfo type hash differs)`);
  await checkCollector(client, paymentCollector, CollectorType.Payment, escrow, `${where}: paymentCollector ${paymentCollector}`);
  await checkCollector(client, refundCollector, CollectorType.Refund, escrow, `${where}: refundCollector ${refundCollector}`);
  const holdsByDefault: Address[] =
    config.holdsByDefault === true
      ? tokens.map((t) => t.address)
      : config.holdsByDefault === false
        ? []
        : config.holdsByDefault.map((token) => tokens.find((t) => t.address.toLowerCase() === token.toLowerCase())!.address);
  return { address: escrow, paymentCollector, refundCollector, holdsByDefault };
}

async function checkCollector(client: PublicClient, address: Address, type: number, escrow: Address, where: string): Promise<void> {
  const [owner, kind] = await Promise.all([
    client.readContract({ address, abi: tokenCollectorAbi, functionName: 'authCaptureEscrow' }).catch(() => undefined),
    client.readContract({ address, abi: tokenCollectorAbi, functionName: 'collectorType' }).catch(() => undefined),
  ]);
  if (owner === undefined || kind === undefined) throw new DeploymentConfigError(`${where}: not a token collector`);
  if (getAddress(owner) !== escrow) throw new DeploymentConfigError(`${where}: collects for escrow ${owner}, not ${escrow}`);
  if (kind !== type) throw new DeploymentConfigError(`${where}: a ${kind === CollectorType.Payment ? 'payment' : 'refund'} collector in the other's place`);
}
