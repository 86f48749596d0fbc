// Deploys the dev tokens and funds the demo payers. Idempotent: with anvil's state kept across
// restarts, an already-deployed token is reused (token i is the owner's transaction i, see
// deployDevTokens) and payers are only topped up to 1000 whole tokens of each.
import {
  createPublicClient,
  createWalletClient,
  getAddress,
  getContractAddress,
  http,
  parseUnits,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
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

/** What each demo payer holds of a token: 1000 whole tokens in its decimals. */
export function payerFunding(decimals: number): bigint {
  return parseUnits('1000', decimals);
}

/** A demo payer's holding of a 6-decimal token (USDC's scale). */
export const PAYER_FUNDING = payerFunding(6);

export interface DevTokenSpec {
  name?: string;
  symbol?: string;
  /** Our token's decimals (default 6, USDC's); an artifact without a decimals argument keeps its own. */
  decimals?: number;
  /** Another token with the same constructor (tests deploy a FiatToken v2.1-like one); default ours. */
  artifact?: ContractArtifact;
}

export interface DevTokenOptions {
  rpcUrl: string;
  chain: Chain;
  accounts: DevAccounts;
}

/** One token, the owner's first deployment on this chain (see deployDevTokens). */
export async function deployDevToken(options: DevTokenOptions & DevTokenSpec): Promise<Address> {
  const [token] = await deployDevTokens({ ...options, tokens: [options] });
  return token!;
}

/**
 * Deploys the tokens in the order given, all before anything else the owner sends, so token i is the
 * owner's transaction i: its address is then the same on every fresh chain and a restart on kept
 * state finds it there. Then tops each payer up to 1000 whole tokens of each.
 */
export async function deployDevTokens(options: DevTokenOptions & { tokens: DevTokenSpec[] }): Promise<Address[]> {
  const transport = http(options.rpcUrl);
  const publicClient = createPublicClient({ chain: options.chain, transport, pollingInterval: 100 });
  const owner = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 0 });
  const wallet = createWalletClient({ chain: options.chain, transport, account: owner });

  const tokens: Address[] = [];
  for (const [slot, spec] of options.tokens.entries()) {
    const expected = getContractAddress({ from: owner.address, nonce: BigInt(slot) });
    if (await publicClient.getCode({ address: expected })) {
      // Kept state from another token list (a slot's token changed) would fund and serve the wrong token.
      const decimals = await publicClient.readContract({ address: expected, abi: tokenAbi, functionName: 'decimals' });
      if (decimals !== (spec.decimals ?? 6)) {
        throw new Error(
          `the token at ${expected} on chain ${options.chain.id} has ${decimals} decimals, not ${spec.decimals ?? 6}: the kept chain state is from another setup; remove it to start afresh`,
        );
      }
      tokens.push(expected);
      continue;
    }
    // On a chain whose owner already sent other transactions (a test's own anvil) the token lands
    // wherever the owner's next nonce puts it; only the stack's kept chains rely on the fixed slots.
    const artifact = spec.artifact ?? authcapToken;
    const args = constructorArgs(artifact, {
      name: spec.name ?? 'USD Coin',
      symbol: spec.symbol ?? 'USDC',
      decimals: spec.decimals ?? 6,
      owner: owner.address,
    });
    const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (!receipt.contractAddress) throw new Error(`${artifact.contractName} deployment produced no contract`);
    // Checksummed, as the address of a token found on kept state is: one spelling on every start.
    tokens.push(getAddress(receipt.contractAddress));
  }
  for (const token of tokens) await fundPayers(publicClient, wallet, token, options.accounts.payers);
  return tokens;
}

/**
 * The constructor's arguments by their names: our token takes (name, symbol, decimals, owner), the
 * FiatToken v2.1-like test token (name, symbol, owner) with 6 decimals fixed.
 */
function constructorArgs(artifact: ContractArtifact, values: { name: string; symbol: string; decimals: number; owner: Address }): unknown[] {
  const ctor = artifact.abi.find((item) => item.type === 'constructor');
  const inputs = ctor && 'inputs' in ctor ? ctor.inputs : [];
  const byName: Record<string, unknown> = { name_: values.name, symbol_: values.symbol, decimals_: values.decimals, owner_: values.owner };
  if (!inputs.some((input) => input.name === 'decimals_') && values.decimals !== 6) {
    throw new Error(`${artifact.contractName} has 6 decimals fixed; it cannot be deployed with ${values.decimals}`);
  }
  return inputs.map((input) => {
    if (!input.name || !(input.name in byName))
      throw new Error(`${artifact.contractName}'s constructor takes ${input.name ?? 'an unnamed argument'}, which the dev stack does not know`);
    return byName[input.name];
  });
}

/** Tops each payer up to 1000 whole tokens, in the decimals the token itself reports. */
async function fundPayers(
  publicClient: PublicClient<Transport, Chain>,
  wallet: WalletClient<Transport, Chain, Account>,
  token: Address,
  payers: DevAccounts['payers'],
): Promise<void> {
  const decimals = await publicClient.readContract({ address: token, abi: tokenAbi, functionName: 'decimals' });
  const funding = payerFunding(Number(decimals));
  const hashes: Hex[] = [];
  for (const payer of payers) {
    const balance = await publicClient.readContract({ address: token, abi: tokenAbi, functionName: 'balanceOf', args: [payer.address] });
    if (balance < funding) {
      hashes.push(await wallet.writeContract({ address: token, abi: tokenAbi, functionName: 'mint', args: [payer.address, funding - balance] }));
    }
  }
  await Promise.all(hashes.map((hash) => publicClient.waitForTransactionReceipt({ hash })));
}
