// Deploys an ERC-1271 contract wallet (contracts/test/MockERC1271Wallet.sol) and funds it with the
// test token, both from the dev stack's token owner key.
import { createWalletClient, defineChain, getAddress, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { mockErc1271Wallet } from '../../contracts/artifacts.js';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { chain, dev } from './api.js';

function tokenOwnerWallet() {
  const owner = dev().tokenOwner;
  if (!owner) throw new Error('dev.json has no tokenOwner: contract-wallet tests need the dev chain');
  const devChain = defineChain({
    id: dev().chainId,
    name: 'authcap-test',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [dev().rpcUrl] } },
  });
  return createWalletClient({ chain: devChain, transport: http(dev().rpcUrl), account: privateKeyToAccount(owner.privateKey) });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Sends one transaction from the token owner and waits for it. Other test files (other processes)
 * send from the same key, so the node may refuse a transaction for its nonce, or mine another in
 * its place: those are retried with a fresh nonce; a revert is not.
 */
async function asTokenOwner(send: (wallet: ReturnType<typeof tokenOwnerWallet>) => Promise<Hex>) {
  const wallet = tokenOwnerWallet();
  for (let attempt = 1; ; attempt += 1) {
    try {
      const hash = await send(wallet);
      const receipt = await chain().waitForTransactionReceipt({ hash, timeout: 15_000 });
      if (receipt.transactionHash !== hash) throw new Error(`transaction ${hash} was replaced by ${receipt.transactionHash}`);
      if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
      return receipt;
    } catch (err) {
      const text = String((err as Error)?.message ?? err);
      const nonceClash = /nonce|underpriced|already known|replaced/i.test(text) && !/reverted/.test(text);
      if (!nonceClash || attempt >= 6) throw err;
      await sleep(100 + Math.floor(Math.random() * 400));
    }
  }
}

/** A fresh contract wallet whose signer is `owner`. */
export async function deployContractWallet(owner: Address): Promise<Address> {
  const receipt = await asTokenOwner((wallet) => wallet.deployContract({ abi: mockErc1271Wallet.abi, bytecode: mockErc1271Wallet.bytecode, args: [owner] }));
  if (!receipt.contractAddress) throw new Error('the wallet deployment produced no contract');
  return getAddress(receipt.contractAddress);
}

/** Mints `amount` (minor units) of the test token to `to`. */
export async function mintTokens(to: Address, amount: bigint): Promise<void> {
  await asTokenOwner((wallet) => wallet.writeContract({ address: dev().tokenAddress, abi: tokenAbi, functionName: 'mint', args: [to, amount] }));
}
