// Baseline B: the x402 "exact" EVM facilitator from npm (@x402/evm), as a merchant would run it.
// A payer signs an EIP-3009 TransferWithAuthorization; the facilitator verify()s it and then
// settle()s it from its own key, waiting for the receipt. Default scheme config (no simulate in
// settle), so what we measure is the library's own round trips, counted per JSON-RPC method.
import { randomBytes } from 'node:crypto';
import { createPublicClient, createWalletClient, defineChain, http, nonceManager, toHex, type Address, type Chain, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { authorizationTypes, toFacilitatorEvmSigner, type ExactEIP3009Payload } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { tokenAbi } from '../../../domain/tokenAbi.js';
import { countingTransport } from './bareCapture.js';
import { RpcMetrics } from '../../../activities/rpc/rpcMetrics.js';

export interface X402BaselineSetup {
  rpcUrl: string;
  chainId: number;
  tokenAddress: Address;
  /** The facilitator's key: it pays gas and sends the settle transaction (already funded with ETH). */
  facilitatorKey: Hex;
  /** Who receives the payments (payTo). */
  payTo: Address;
  /**
   * Give the facilitator's account viem's nonce manager (nonces handed out in process, so sends at
   * once do not collide on the account nonce). Off by default: the library's own setup fetches the
   * pending nonce for each send.
   */
  nonceManager?: boolean;
}
export interface X402Settlement {
  transactionHash: Hex /** verify + settle, ms from start until settle() resolved */;
  ms: number;
}
/** One payment through the facilitator, whatever it answered (X402Baseline.attempt). */
export interface X402Attempt {
  payer: Address;
  payTo: Address;
  nonce: Hex;
  amount: bigint;
  /** The authorization's validBefore (unix seconds). */
  validBefore: bigint;
  /** verify()'s answer; settle is not called when it is invalid. */
  verify: { isValid: boolean; invalidReason?: string };
  settle?: { success: boolean; errorReason?: string; errorMessage?: string; transaction: string };
  /** What verify() or settle() threw instead of answering (its first line). */
  error?: string;
  /** sign → verify answered, and verify → settle answered, ms. */
  verifyMs: number;
  settleMs: number;
  /** sign + verify + settle, ms. */
  ms: number;
}
export interface X402Baseline {
  /** The facilitator key's address (it sends every settle). */
  readonly address: Address;
  /** Signs a fresh authorization as pay() does, verifies and settles it, and returns every answer (throws nothing). */
  attempt(payer: { address: Address; privateKey: Hex }, amountMinor: bigint): Promise<X402Attempt>;
  /** Signs a fresh TransferWithAuthorization for `payer` (random nonce, window [now-60s, now+600s]), then verify() and settle() through the facilitator. Throws if verify says invalid or settle fails. */
  pay(payer: { address: Address; privateKey: Hex }, amountMinor: bigint): Promise<X402Settlement>;
  /** JSON-RPC calls made by the facilitator (and only it) so far, by method name, e.g. { eth_call: 3, eth_sendRawTransaction: 1, ... }. */
  rpcCalls(): Record<string, number>;
}

// The x402 wire shapes, taken from the scheme's own signature so we need no direct @x402/core import.
type PaymentPayload = Parameters<ExactEvmScheme['verify']>[0];
type PaymentRequirements = Parameters<ExactEvmScheme['verify']>[1];
type FacilitatorClient = Parameters<typeof toFacilitatorEvmSigner>[0];

const X402_VERSION = 2 as const;
const POLL_MS = 20; // same receipt polling cadence as baseline A

function benchChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({ id: chainId, name: 'bench', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } });
}

/** The facilitator's viem clients behind x402's signer interface; every call is counted in `metrics`. */
function facilitatorSigner(setup: X402BaselineSetup, chain: Chain, metrics: RpcMetrics) {
  const transport = countingTransport(setup.rpcUrl, metrics);
  const account = privateKeyToAccount(setup.facilitatorKey, setup.nonceManager ? { nonceManager } : undefined);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: POLL_MS }) as PublicClient;
  const wallet = createWalletClient({ chain, transport, account, pollingInterval: POLL_MS });
  // x402 types its arguments loosely (abi: unknown[], domain: Record<string, unknown>); viem's are
  // precise generics, so each delegate widens its argument rather than re-validating it.
  const client: FacilitatorClient = {
    address: account.address,
    readContract: (args) => publicClient.readContract(args as never),
    verifyTypedData: (args) => publicClient.verifyTypedData(args as never),
    writeContract: (args) => wallet.writeContract(args as never),
    sendTransaction: (args) => wallet.sendTransaction(args),
    waitForTransactionReceipt: (args) => publicClient.waitForTransactionReceipt(args),
    getCode: (args) => publicClient.getCode(args),
  };
  return toFacilitatorEvmSigner(client);
}

/** The token's EIP-712 name and version, read once over an uncounted client (setup, not facilitator work). */
async function tokenDomain(rpcUrl: string, chain: Chain, token: Address): Promise<{ name: string; version: string }> {
  const reader = createPublicClient({ chain, transport: http(rpcUrl) });
  const [name, version] = await Promise.all([
    reader.readContract({ address: token, abi: tokenAbi, functionName: 'name' }),
    reader.readContract({ address: token, abi: tokenAbi, functionName: 'version' }),
  ]);
  return { name, version };
}

/** What the payer's wallet does: sign locally, no RPC, so none of it shows in the facilitator's counts. */
async function signPayment(
  payer: { address: Address; privateKey: Hex },
  requirements: PaymentRequirements,
  chainId: number,
  domain: { name: string; version: string },
): Promise<PaymentPayload> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = {
    from: payer.address,
    to: requirements.payTo as Address,
    value: BigInt(requirements.amount),
    validAfter: now - 60n,
    validBefore: now + 600n,
    nonce: toHex(randomBytes(32)),
  };
  const signature = await privateKeyToAccount(payer.privateKey).signTypedData({
    domain: { ...domain, chainId, verifyingContract: requirements.asset as Address },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  // On the wire every uint256 is a decimal string.
  const payload: ExactEIP3009Payload = {
    signature,
    authorization: { ...message, value: String(message.value), validAfter: String(message.validAfter), validBefore: String(message.validBefore) },
  };
  return { x402Version: X402_VERSION, accepted: requirements, payload };
}

export async function createX402Baseline(setup: X402BaselineSetup): Promise<X402Baseline> {
  const metrics = new RpcMetrics();
  const chain = benchChain(setup.chainId, setup.rpcUrl);
  const scheme = new ExactEvmScheme(facilitatorSigner(setup, chain, metrics));
  const domain = await tokenDomain(setup.rpcUrl, chain, setup.tokenAddress);

  function requirementsFor(amountMinor: bigint): PaymentRequirements {
    return {
      scheme: 'exact',
      network: `eip155:${setup.chainId}`,
      asset: setup.tokenAddress,
      amount: amountMinor.toString(),
      payTo: setup.payTo,
      maxTimeoutSeconds: 600,
      extra: { ...domain },
    };
  }

  async function pay(payer: { address: Address; privateKey: Hex }, amountMinor: bigint): Promise<X402Settlement> {
    const requirements = requirementsFor(amountMinor);
    // The clock starts before the payer signs, as baseline A's does: one local signature either way.
    const started = performance.now();
    const payload = await signPayment(payer, requirements, setup.chainId, domain);
    const verified = await scheme.verify(payload, requirements);
    if (!verified.isValid)
      throw new Error(`x402 verify rejected the payment: ${verified.invalidReason}${verified.invalidMessage ? ` (${verified.invalidMessage})` : ''}`);
    const settled = await scheme.settle(payload, requirements);
    const ms = performance.now() - started;
    if (!settled.success)
      throw new Error(
        `x402 settle failed: ${settled.errorReason}${settled.errorMessage ? ` (${settled.errorMessage})` : ''} tx=${settled.transaction || 'none'}`,
      );
    return { transactionHash: settled.transaction as Hex, ms };
  }

  async function attempt(payer: { address: Address; privateKey: Hex }, amountMinor: bigint): Promise<X402Attempt> {
    const requirements = requirementsFor(amountMinor);
    const started = performance.now();
    const payload = await signPayment(payer, requirements, setup.chainId, domain);
    const { authorization } = payload.payload as ExactEIP3009Payload;
    const out: X402Attempt = {
      payer: payer.address,
      payTo: setup.payTo,
      nonce: authorization.nonce as Hex,
      amount: amountMinor,
      validBefore: BigInt(authorization.validBefore),
      verify: { isValid: false },
      verifyMs: 0,
      settleMs: 0,
      ms: 0,
    };
    try {
      const verified = await scheme.verify(payload, requirements);
      out.verify = { isValid: verified.isValid, ...(verified.invalidReason ? { invalidReason: verified.invalidReason } : {}) };
      out.verifyMs = performance.now() - started;
      if (verified.isValid) {
        const settled = await scheme.settle(payload, requirements);
        out.settle = {
          success: settled.success,
          transaction: settled.transaction,
          ...(settled.errorReason ? { errorReason: settled.errorReason } : {}),
          ...(settled.errorMessage ? { errorMessage: settled.errorMessage.split('\n')[0]!.slice(0, 200) } : {}),
        };
        out.settleMs = performance.now() - started - out.verifyMs;
      }
    } catch (err) {
      out.error = (err as Error).message.split('\n')[0]!;
    }
    out.ms = performance.now() - started;
    return out;
  }

  return { address: privateKeyToAccount(setup.facilitatorKey).address, attempt, pay, rpcCalls: () => metrics.snapshot().byMethod };
}
