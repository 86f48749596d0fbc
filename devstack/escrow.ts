// Deploys the dev chain's escrow: authcap's AuthCaptureEscrow and its two collectors (contracts/escrow),
// from a deployer of their own so each lands at the same address on every fresh chain (its
// transactions 0, 1, 2) and a restart on kept state finds them there. One escrow serves every token.
import { createPublicClient, createTestClient, createWalletClient, getContractAddress, http, parseEther, zeroAddress, type Chain } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { escrowArtifacts, type ContractArtifact, type EscrowArtifacts } from '../contracts/artifacts.js';
import type { EscrowAddresses } from '../domain/escrow.js';
import { ANVIL_MNEMONIC } from './anvil.js';

/** Past the payers (2..17) and before the extra merchant keys (40..): a key that only ever deploys the escrow. */
const ESCROW_DEPLOYER_INDEX = 30;

/** `artifacts`: what to deploy (authcap's own unless given; AUTHCAP_DEV_ESCROW_ARTIFACTS names others of the same interface). */
export async function deployDevEscrow(options: { rpcUrl: string; chain: Chain; artifacts?: EscrowArtifacts }): Promise<EscrowAddresses> {
  const built = options.artifacts ?? escrowArtifacts();
  const transport = http(options.rpcUrl);
  const publicClient = createPublicClient({ chain: options.chain, transport, pollingInterval: 100 });
  const deployer = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: ESCROW_DEPLOYER_INDEX });
  const slot = (nonce: number) => getContractAddress({ from: deployer.address, nonce: BigInt(nonce) });
  const addresses: EscrowAddresses = { escrow: slot(0), paymentCollector: slot(1), refundCollector: slot(2) };
  if (await publicClient.getCode({ address: addresses.refundCollector })) return addresses;
  if ((await publicClient.getTransactionCount({ address: deployer.address })) !== 0)
    throw new Error(
      `the escrow deployer ${deployer.address} on chain ${options.chain.id} sent transactions but the escrow is not at ${addresses.escrow}: the kept chain state is from another setup; remove it to start afresh`,
    );
  await createTestClient({ mode: 'anvil', chain: options.chain, transport }).setBalance({ address: deployer.address, value: parseEther('10') });
  const wallet = createWalletClient({ chain: options.chain, transport, account: deployer });
  const deploy = async (artifact: ContractArtifact, args: readonly unknown[]) => {
    const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`${artifact.contractName} deployment reverted`);
  };
  await deploy(built.escrow, []);
  // No Multicall3 on a bare anvil: ERC-6492 signatures are unwrapped, their wallets not deployed.
  await deploy(built.payment, [addresses.escrow, zeroAddress]);
  await deploy(built.refund, [addresses.escrow]);
  return addresses;
}
