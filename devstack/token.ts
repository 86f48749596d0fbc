// Deploys the dev token and funds the demo payers. Idempotent: with anvil's state kept across
// restarts, an already-deployed token is reused and payers are only topped up to their allowance.
import { createPublicClient, createWalletClient, getContractAddress, http, parseUnits, type Address, type Chain, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { authcapToken, type ContractArtifact } from '../contracts/artifacts.js';
import { tokenAbi } from '../domain/tokenAbi.js';
import { ANVIL_MNEMONIC } from './anvil.js';

export interface DevAccounts {
  tokenOwner: { address: Address; privateKey: Hex };
  merchant: { address: Address; privateKey: Hex };
  payers: { address: Address; privateKey: Hex }[];
}

function keyAt(addressIndex: number): { address: Address; privateKey: Hex } {
  const account = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex });
  const privateKey = `0x${Buffer.from(account.getHdKey().privateKey!).toString('hex')}` as Hex;
  return { address: account.address, privateKey };
}

/** More merchant keys for the dev chain (AUTHCAP_MERCHANT_KEYS > 1): well-known keys from index 40 on. */
export function extraMerchantKeys(count: number): { address: Address; privateKey: Hex }[] {
  return Array.from({ length: Math.max(0, count) }, (_, i) => keyAt(40 + i));
}

/** Well-known anvil accounts: 0 owns the token, 1 is the merchant, 2.. are payers. */
export function devAccounts(payerCount = 16): DevAccounts {
  return {
    tokenOwner: keyAt(0),
    merchant: keyAt(1),
    payers: Array.from({ length: payerCount }, (_, i) => keyAt(2 + i)),
  };
}

export const PAYER_FUNDING = parseUnits('1000', 6);

export async function deployDevToken(options: {
  rpcUrl: string;
  chain: Chain;
  accounts: DevAccounts;
  name?: string;
  symbol?: string;
  /** Another token with the same constructor (tests deploy a FiatToken v2.1-like one); default ours. */
  artifact?: ContractArtifact;
}): Promise<Address> {
  const transport = http(options.rpcUrl);
  const publicClient = createPublicClient({ chain: options.chain, transport, pollingInterval: 100 });
  const owner = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 0 });
  const wallet = createWalletClient({ chain: options.chain, transport, account: owner });

  // The owner's first transaction deploys the token, so its address is the same on every fresh chain.
  const expected = getContractAddress({ from: owner.address, nonce: 0n });
  let token: Address;
  if (await publicClient.getCode({ address: expected })) {
    token = expected;
  } else {
    const artifact = options.artifact ?? authcapToken;
    const hash = await wallet.deployContract({
      abi: artifact.abi,
      bytecode: artifact.bytecode,
      args: [options.name ?? 'USD Coin', options.symbol ?? 'USDC', owner.address],
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (!receipt.contractAddress) throw new Error('token deployment produced no contract');
    token = receipt.contractAddress;
  }
  const hashes: Hex[] = [];
  for (const payer of options.accounts.payers) {
    const balance = await publicClient.readContract({ address: token, abi: tokenAbi, functionName: 'balanceOf', args: [payer.address] });
    if (balance < PAYER_FUNDING) {
      hashes.push(await wallet.writeContract({ address: token, abi: tokenAbi, functionName: 'mint', args: [payer.address, PAYER_FUNDING - balance] }));
    }
  }
  await Promise.all(hashes.map((hash) => publicClient.waitForTransactionReceipt({ hash })));
  return token;
}
