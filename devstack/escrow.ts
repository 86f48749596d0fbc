// Deploys the dev chain's escrow: authcap's AuthCaptureEscrow and its two collectors (contracts/escrow),
// at the addresses Commerce Payments has on Base (v1.0, docs/holds.md), so a payer's wallet or an
// x402 client that knows only those (x402's auth-capture client) signs for the dev chain's escrow as
// it would on Base, and a restart on kept state finds them there. One escrow serves every token.
// They are built by a deployer of their own (its transactions 0, 1, 2), then their code is placed at
// those addresses with anvil_setCode: the collectors are built for the escrow's address there, and
// the token store the escrow clones for each operator is told that address too (its one immutable).
import {
  bytesToHex,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getContractAddress,
  hexToBytes,
  http,
  parseEther,
  zeroAddress,
  type Address,
  type Chain,
  type Hex,
} from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { escrowArtifacts, type ContractArtifact, type EscrowArtifacts } from '../contracts/artifacts.js';
import type { EscrowAddresses } from '../domain/escrow.js';
import { ANVIL_MNEMONIC } from './anvil.js';

/** Past the payers (2..17) and before the extra merchant keys (40..): a key that only ever deploys the escrow. */
const ESCROW_DEPLOYER_INDEX = 30;

/** Commerce Payments' v1.0 deployment on Base and Base Sepolia: where the dev chain's escrow is too. */
export const BASE_ESCROW_ADDRESSES: EscrowAddresses = {
  escrow: '0xBdEA0D1bcC5966192B070Fdf62aB4EF5b4420cff',
  paymentCollector: '0x0E3dF9510de65469C4518D7843919c0b8C7A7757',
  refundCollector: '0x934907bffd0901b6A21e398B9C53A4A38F02fa5d',
};

const tokenStoreImplementationAbi = [
  { type: 'function', name: 'tokenStoreImplementation', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] },
] as const;

/** `artifacts`: what to deploy (authcap's own unless given; AUTHCAP_DEV_ESCROW_ARTIFACTS names others of the same interface). */
export async function deployDevEscrow(options: { rpcUrl: string; chain: Chain; artifacts?: EscrowArtifacts }): Promise<EscrowAddresses> {
  const built = options.artifacts ?? escrowArtifacts();
  const transport = http(options.rpcUrl);
  const publicClient = createPublicClient({ chain: options.chain, transport, pollingInterval: 100 });
  const deployer = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: ESCROW_DEPLOYER_INDEX });
  const slot = (nonce: number) => getContractAddress({ from: deployer.address, nonce: BigInt(nonce) });
  const builtAt: EscrowAddresses = { escrow: slot(0), paymentCollector: slot(1), refundCollector: slot(2) };
  const addresses = BASE_ESCROW_ADDRESSES;
  if (await publicClient.getCode({ address: addresses.refundCollector })) return addresses;
  // A chain kept from before the escrow moved to Base's addresses has it built already: only placed then.
  if (!(await publicClient.getCode({ address: builtAt.refundCollector }))) {
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
  }
  const testClient = createTestClient({ mode: 'anvil', chain: options.chain, transport });
  const codeAt = async (address: Address) => {
    const code = await publicClient.getCode({ address });
    if (!code) throw new Error(`no code at ${address} after the escrow's deployment`);
    return code;
  };
  // The token store trusts only the escrow it was made for: now the one at Base's address.
  const tokenStore = await publicClient.readContract({ address: builtAt.escrow, abi: tokenStoreImplementationAbi, functionName: 'tokenStoreImplementation' });
  await testClient.setCode({ address: tokenStore, bytecode: replaceAddress(await codeAt(tokenStore), builtAt.escrow, addresses.escrow) });
  await testClient.setCode({ address: addresses.escrow, bytecode: await codeAt(builtAt.escrow) });
  // Collectors built on a kept chain before the move name the escrow where it was built: named anew.
  for (const which of ['paymentCollector', 'refundCollector'] as const) {
    const code = await codeAt(builtAt[which]);
    await testClient.setCode({ address: addresses[which], bytecode: replaceAddress(code, builtAt.escrow, addresses.escrow, false) });
  }
  return addresses;
}

/** Runtime code with every occurrence of one address (an immutable) replaced by another. */
function replaceAddress(code: Hex, from: Address, to: Address, required = true): Hex {
  const bytes = hexToBytes(code);
  const needle = hexToBytes(from);
  const replacement = hexToBytes(to);
  let replaced = 0;
  for (let i = 0; i + needle.length <= bytes.length; i += 1) {
    if (needle.every((b, j) => bytes[i + j] === b)) {
      bytes.set(replacement, i);
      replaced += 1;
    }
  }
  if (replaced === 0 && required) throw new Error(`the token store's code does not name the escrow ${from}`);
  return bytesToHex(bytes);
}
