// A real anvil with AuthcapToken deployed, plus the signing and revert-decoding helpers the
// contract tests share. Every call goes through viem exactly as production code would.
import { randomBytes } from 'node:crypto';
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
  parseSignature,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type HDAccount,
  type TransactionReceipt,
} from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { ANVIL_MNEMONIC, startAnvil, type Anvil } from '../../devstack/anvil.js';
import { freePort } from '../../devstack/process.js';
import { authcapToken, type ContractArtifact } from '../../contracts/artifacts.js';

export const TOKEN_NAME = 'Authcap Test USD';
export const TOKEN_SYMBOL = 'atUSD';

const TRANSFER_FIELDS = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
] as const;

export const AUTHORIZATION_TYPES = {
  TransferWithAuthorization: TRANSFER_FIELDS,
  ReceiveWithAuthorization: TRANSFER_FIELDS,
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

export type TransferKind = 'TransferWithAuthorization' | 'ReceiveWithAuthorization';

export interface Authorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;

export function freshNonce(): Hex {
  return `0x${randomBytes(32).toString('hex')}`;
}

/** Finds the Solidity revert string inside whatever viem wrapped it in. */
export function revertReasonOf(err: unknown): string | undefined {
  if (!(err instanceof BaseError)) throw err;
  const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
  if (reverted instanceof ContractFunctionRevertedError) return reverted.reason;
  throw err;
}

/** The args for the (v, r, s) overload, derived from a 65-byte signature. */
export function splitSignature(signature: Hex): [number, Hex, Hex] {
  const { v, r, s, yParity } = parseSignature(signature);
  return [v === undefined ? 27 + yParity : Number(v), r, s];
}

export function transferArgs(auth: Authorization): [Address, Address, bigint, bigint, bigint, Hex] {
  return [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce];
}

export async function startHarness() {
  const anvil: Anvil = await startAnvil({ port: await freePort() });
  const chain: Chain = defineChain({
    id: anvil.chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  const transport = http(anvil.rpcUrl);
  // Automine answers instantly; viem's default 4 s receipt polling would dominate the run time.
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  const testClient = createTestClient({ chain, transport, mode: 'anvil', pollingInterval: 50 });
  const account = (addressIndex: number): HDAccount => mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex });
  const accounts = {
    owner: account(0),
    payer: account(1),
    payee: account(2),
    relayer: account(3),
    stranger: account(4),
    walletOwner: account(5),
  };
  const walletFor = (from: Account) => createWalletClient({ chain, transport, account: from, pollingInterval: 50 });

  async function deploy(artifact: ContractArtifact, args: readonly unknown[]): Promise<Address> {
    const hash = await walletFor(accounts.owner).deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (!receipt.contractAddress) throw new Error(`${artifact.contractName} deployment produced no address`);
    return receipt.contractAddress;
  }

  const token = await deploy(authcapToken, [TOKEN_NAME, TOKEN_SYMBOL, 6, accounts.owner.address]);
  const domain = { name: TOKEN_NAME, version: '2', chainId: anvil.chainId, verifyingContract: token } as const;

  const read = <T>(functionName: string, args: readonly unknown[] = []): Promise<T> =>
    publicClient.readContract({ address: token, abi: authcapToken.abi, functionName, args }) as Promise<T>;

  /** Simulates first so a revert surfaces with its decoded reason, then mines it. */
  async function write(from: Account, functionName: string, args: readonly unknown[]): Promise<TransactionReceipt> {
    const { request } = await publicClient.simulateContract({
      address: token,
      abi: authcapToken.abi,
      functionName,
      args,
      account: from,
    });
    const hash = await walletFor(from).writeContract(request);
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`${functionName} mined but reverted`);
    return receipt;
  }

  /** The revert string the call fails with, or undefined if it would succeed. */
  async function revertReason(from: Account, functionName: string, args: readonly unknown[], atTimestamp?: bigint): Promise<string | undefined> {
    try {
      await publicClient.simulateContract({
        address: token,
        abi: authcapToken.abi,
        functionName,
        args,
        account: from,
        ...(atTimestamp === undefined ? {} : { blockOverrides: { time: atTimestamp } }),
      });
      return undefined;
    } catch (err) {
      return revertReasonOf(err);
    }
  }

  /** Mines the call as the only transaction in a block stamped exactly `timestamp`. */
  async function mineAt(from: Account, timestamp: bigint, functionName: string, args: readonly unknown[]) {
    await testClient.setNextBlockTimestamp({ timestamp });
    // Fixed gas skips estimation, which would refuse to send a transaction that reverts.
    const hash = await walletFor(from).writeContract({
      address: token,
      abi: authcapToken.abi,
      functionName,
      args,
      gas: 500_000n,
      chain,
      account: from,
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    const block = await publicClient.getBlock({ blockNumber: receipt.blockNumber });
    return { receipt, blockTimestamp: block.timestamp };
  }

  function signTransfer(signer: HDAccount, kind: TransferKind, auth: Authorization): Promise<Hex> {
    return signer.signTypedData({ domain, types: AUTHORIZATION_TYPES, primaryType: kind, message: auth });
  }

  function signCancel(signer: HDAccount, authorizer: Address, nonce: Hex): Promise<Hex> {
    return signer.signTypedData({
      domain,
      types: AUTHORIZATION_TYPES,
      primaryType: 'CancelAuthorization',
      message: { authorizer, nonce },
    });
  }

  async function latestTimestamp(): Promise<bigint> {
    return (await publicClient.getBlock()).timestamp;
  }

  return {
    anvil,
    chain,
    publicClient,
    testClient,
    accounts,
    token,
    domain,
    deploy,
    read,
    write,
    revertReason,
    mineAt,
    signTransfer,
    signCancel,
    latestTimestamp,
    walletFor,
    stop: () => anvil.stop(),
  };
}
