// Helpers for the lifecycle suites (test/integration/lifecycle.*.test.ts): the API calls an order
// service makes, polling for states the workflow reaches by itself, and the token owner's and
// payers' own onchain moves (funding, minting, blacklisting, settling elsewhere).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, inject, vi } from 'vitest';
import { createWalletClient, defineChain, http, toHex, type Address, type Hex, type TransactionReceipt } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { Wallet } from 'ethers';
import { tokenAbi } from '../../domain/tokenAbi.js';
import { api, chain, dev, newOrderId, walletSign } from './api.js';

export interface DemoKey {
  address: Address;
  privateKey: Hex;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export function walletFor(privateKey: Hex) {
  const devChain = defineChain({
    id: dev().chainId,
    name: 'authcap-test',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [dev().rpcUrl] } },
  });
  return createWalletClient({ chain: devChain, transport: http(dev().rpcUrl), account: privateKeyToAccount(privateKey) });
}

export type LocalWallet = ReturnType<typeof walletFor>;

function tokenOwner(): DemoKey {
  const owner = dev().tokenOwner;
  if (!owner) throw new Error('dev.json has no tokenOwner: these tests need the dev chain');
  return owner;
}

/** Sends one transaction and waits for it; fails on revert or when the chain mined another tx in its place. */
async function sendAndWait(wallet: LocalWallet, send: (w: LocalWallet) => Promise<Hex>): Promise<TransactionReceipt> {
  const hash = await send(wallet);
  const receipt = await chain().waitForTransactionReceipt({ hash, timeout: 15_000 });
  if (receipt.transactionHash !== hash) throw new Error(`transaction ${hash} was replaced by ${receipt.transactionHash}`);
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
  return receipt;
}

// The token owner key is shared with other test files running in parallel (other processes), so a
// transaction nonce may collide: serialize here and retry what the node refused for its nonce.
let ownerQueue: Promise<unknown> = Promise.resolve();
export function asTokenOwner(send: (w: LocalWallet) => Promise<Hex>): Promise<TransactionReceipt> {
  const run = async () => {
    const wallet = walletFor(tokenOwner().privateKey);
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await sendAndWait(wallet, send);
      } catch (err) {
        const text = String((err as Error)?.message ?? err);
        const nonceClash = /nonce|underpriced|already known|replaced/i.test(text) && !/reverted/.test(text);
        if (!nonceClash || attempt >= 6) throw err;
        await sleep(100 + Math.floor(Math.random() * 400));
      }
    }
  };
  const result = ownerQueue.then(run, run);
  ownerQueue = result.catch(() => undefined);
  return result;
}

/** A transaction from a payer's own key (the payer must hold ETH for gas: see fundEth). */
export function asPayer(p: DemoKey, send: (w: LocalWallet) => Promise<Hex>): Promise<TransactionReceipt> {
  return sendAndWait(walletFor(p.privateKey), send);
}

const token = () => ({ address: dev().tokenAddress, abi: tokenAbi }) as const;

export const fundEth = (to: Address, wei: bigint) => asTokenOwner((w) => w.sendTransaction({ to, value: wei }));
export const mint = (to: Address, amount: bigint) => asTokenOwner((w) => w.writeContract({ ...token(), functionName: 'mint', args: [to, amount] }));
export const blacklist = (a: Address) => asTokenOwner((w) => w.writeContract({ ...token(), functionName: 'blacklist', args: [a] }));
export const unBlacklist = (a: Address) => asTokenOwner((w) => w.writeContract({ ...token(), functionName: 'unBlacklist', args: [a] }));

export function authorizationState(authorizer: Address, nonce: Hex): Promise<boolean> {
  return chain().readContract({ ...token(), functionName: 'authorizationState', args: [authorizer, nonce] });
}

/** Every AuthorizationUsed / AuthorizationCanceled log ever emitted for (authorizer, nonce). */
export async function nonceLogs(authorizer: Address, nonce: Hex) {
  const c = chain();
  const [used, canceled] = await Promise.all([
    c.getContractEvents({ ...token(), eventName: 'AuthorizationUsed', args: { authorizer, nonce }, fromBlock: 0n, toBlock: 'latest' }),
    c.getContractEvents({ ...token(), eventName: 'AuthorizationCanceled', args: { authorizer, nonce }, fromBlock: 0n, toBlock: 'latest' }),
  ]);
  return { used, canceled };
}

/**
 * The merchant's token balance moved in the receipt's block by exactly the Transfer logs into it in
 * that block (other files capture concurrently), and this receipt holds one Transfer of `value` from
 * `from` to the merchant.
 */
export async function expectMerchantCredited(receipt: TransactionReceipt, from: Address, value: bigint): Promise<void> {
  const c = chain();
  const merchant = dev().merchantAddress;
  const block = receipt.blockNumber;
  const [before, after, inBlock] = await Promise.all([
    c.readContract({ ...token(), functionName: 'balanceOf', args: [merchant], blockNumber: block - 1n }),
    c.readContract({ ...token(), functionName: 'balanceOf', args: [merchant], blockNumber: block }),
    c.getContractEvents({ ...token(), eventName: 'Transfer', args: { to: merchant }, fromBlock: block, toBlock: block }),
  ]);
  expect(after - before, 'merchant balance change in the capture block').toBe(inBlock.reduce((sum, l) => sum + l.args.value!, 0n));
  const ours = inBlock.filter((l) => l.transactionHash === receipt.transactionHash).map((l) => l.args);
  expect(ours).toEqual([{ from, to: merchant, value }]);
}

// --- the API -----------------------------------------------------------------------------------

export async function getAuthorization(id: string): Promise<any> {
  const res = await api('GET', `/v1/authorizations/${id}`);
  expect(res.status, `GET ${id}`).toBe(200);
  return res.body;
}

/** Polls GET until the workflow reaches `state` by itself. */
export function waitForState(id: string, state: string, timeoutMs = 20_000): Promise<any> {
  return vi.waitFor(
    async () => {
      const body = await getAuthorization(id);
      expect(body.state).toBe(state);
      return body;
    },
    { timeout: timeoutMs, interval: 250 },
  );
}

export async function draft(p: DemoKey, amount: string, extra: { orderId?: string; validForSeconds?: number } = {}): Promise<any> {
  const res = await api('POST', '/v1/authorizations', {
    orderId: extra.orderId ?? newOrderId('lc'),
    payer: p.address,
    amount,
    validForSeconds: extra.validForSeconds,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.state).toBe('drafted');
  return res.body;
}

export async function stored(p: DemoKey, amount: string, extra: { orderId?: string; validForSeconds?: number } = {}): Promise<any> {
  const drafted = await draft(p, amount, extra);
  const res = await api('POST', `/v1/authorizations/${drafted.id}/signature`, { signature: walletSign(drafted.typedData, p.privateKey) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.state).toBe('stored');
  return res.body;
}

export async function listAuthorizations(query: Record<string, string>): Promise<any[]> {
  const res = await api('GET', `/v1/authorizations?${new URLSearchParams(query)}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

export const historyStates = (resource: { history: { state: string }[] }) => resource.history.map((h) => h.state);

// --- pre-signed authorizations, signed with ethers (not viem, not eth-sig-util) -------------------

export type PrimaryType = 'TransferWithAuthorization' | 'ReceiveWithAuthorization';

export interface TokenDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

export async function tokenDomain(): Promise<TokenDomain> {
  const [name, version] = await Promise.all([
    chain().readContract({ ...token(), functionName: 'name' }),
    chain().readContract({ ...token(), functionName: 'version' }),
  ]);
  return { name, version, chainId: dev().chainId, verifyingContract: dev().tokenAddress };
}

export interface AuthorizationMessage {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}

export function authorizationMessage(from: Address, value: bigint, overrides: Partial<AuthorizationMessage> = {}): AuthorizationMessage {
  const now = Math.floor(Date.now() / 1000);
  return {
    from,
    to: dev().merchantAddress,
    value: value.toString(),
    validAfter: String(now - 60),
    validBefore: String(now + 600),
    nonce: toHex(randomBytes(32)),
    ...overrides,
  };
}

const authorizationFields = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
];

/** ethers v6 signTypedData: the types carry no EIP712Domain (ethers derives it from the domain). */
export async function ethersSign(primaryType: PrimaryType, domain: TokenDomain, message: AuthorizationMessage, privateKey: Hex): Promise<Hex> {
  return (await new Wallet(privateKey).signTypedData(domain, { [primaryType]: authorizationFields }, message)) as Hex;
}

// --- the operator CLI, as a real child process -------------------------------------------------

const execFileAsync = promisify(execFile);

export async function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const d = dev();
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: d.temporalAddress,
    TEMPORAL_NAMESPACE: d.temporalNamespace,
    AUTHCAP_KEYS_FILE: `${inject('stateDir')}/api-keys.json`,
  };
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, ['bin/authcap.mjs', ...args], { cwd: repoRoot, env, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
