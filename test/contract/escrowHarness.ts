// The escrow and its two collectors deployed beside the harness's token, driven through authcap's own
// `as const` escrow ABI (domain/escrowAbi.ts) exactly as product code drives Commerce Payments' contracts.
import { BaseError, ContractFunctionRevertedError, parseEventLogs, zeroAddress, type Account, type Address, type Hex, type TransactionReceipt } from 'viem';
import { escrowArtifacts } from '../../contracts/artifacts.js';
import { escrowAbi } from '../../domain/escrowAbi.js';
import { holdAuthorizationMessage, type EscrowAddresses, type PaymentInfo } from '../../domain/escrow.js';
import { authorizationTypes } from '../../domain/eip3009.js';
import { randomBytes } from 'node:crypto';
import type { Harness } from './harness.js';

export type EscrowHarness = Awaited<ReturnType<typeof deployEscrow>>;
type Signer = Harness['accounts']['payer'];

/** The custom error's name, or the revert string, a call fails with; throws what is not a revert. */
export function escrowRevertOf(err: unknown): string {
  if (!(err instanceof BaseError)) throw err;
  const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError)) throw err;
  return reverted.data?.errorName === 'Error' ? String(reverted.reason) : (reverted.data?.errorName ?? String(reverted.reason));
}

/**
 * The contracts to deploy: ours, or with AUTHCAP_ESCROW_ARTIFACTS=<dir> others of the same interface
 * (Commerce Payments' own, built from their repository: docs/contributing.md) to prove the same client
 * code drives them.
 */
const artifacts = () => escrowArtifacts(process.env.AUTHCAP_ESCROW_ARTIFACTS);

export async function deployEscrow(h: Harness) {
  const built = artifacts();
  const escrow = await h.deploy(built.escrow, []);
  // No Multicall3 on a bare anvil: wrapped (ERC-6492) signatures are unwrapped, their wallets not deployed.
  const paymentCollector = await h.deploy(built.payment, [escrow, zeroAddress]);
  const refundCollector = await h.deploy(built.refund, [escrow]);
  const addresses: EscrowAddresses = { escrow, paymentCollector, refundCollector };

  /** Terms for one payment of up to `maxAmount`, expiring relative to the chain's latest block. */
  async function terms(overrides: Partial<PaymentInfo> = {}): Promise<PaymentInfo> {
    const now = Number(await h.latestTimestamp());
    return {
      operator: h.accounts.relayer.address,
      payer: h.accounts.payer.address,
      receiver: h.accounts.payee.address,
      token: h.token,
      maxAmount: 10_000_000n,
      preApprovalExpiry: now + 3_600,
      authorizationExpiry: now + 7_200,
      refundExpiry: now + 86_400,
      minFeeBps: 0,
      maxFeeBps: 0,
      feeReceiver: zeroAddress,
      salt: BigInt(`0x${randomBytes(32).toString('hex')}`),
      ...overrides,
    };
  }

  /** The payer's signature of the collector's ReceiveWithAuthorization for `info`. */
  function signHold(info: PaymentInfo, signer: Signer = h.accounts.payer): Promise<Hex> {
    const message = holdAuthorizationMessage(info, h.anvil.chainId, addresses);
    return signer.signTypedData({
      domain: h.domain,
      types: authorizationTypes,
      primaryType: 'ReceiveWithAuthorization',
      message: { ...message, value: BigInt(message.value), validAfter: BigInt(message.validAfter), validBefore: BigInt(message.validBefore) },
    });
  }

  /** Simulates (so a revert surfaces decoded), then mines; returns the receipt. */
  async function send(from: Account, functionName: (typeof escrowAbi)[number]['name'], args: readonly unknown[]): Promise<TransactionReceipt> {
    const { request } = await h.publicClient.simulateContract({ address: escrow, abi: escrowAbi, functionName, args, account: from } as never);
    const hash = await h.walletFor(from).writeContract(request as never);
    const receipt = await h.publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`${functionName} mined but reverted`);
    return receipt;
  }

  /** The error a call would fail with now, or undefined when it would succeed. */
  async function refusal(from: Account, functionName: string, args: readonly unknown[]): Promise<string | undefined> {
    try {
      await h.publicClient.simulateContract({ address: escrow, abi: escrowAbi, functionName, args, account: from } as never);
      return undefined;
    } catch (err) {
      return escrowRevertOf(err);
    }
  }

  async function state(info: PaymentInfo) {
    const hash = await h.publicClient.readContract({ address: escrow, abi: escrowAbi, functionName: 'getHash', args: [info] });
    const [hasCollectedPayment, capturableAmount, refundableAmount] = await h.publicClient.readContract({
      address: escrow,
      abi: escrowAbi,
      functionName: 'paymentState',
      args: [hash],
    });
    return { hash, hasCollectedPayment, capturableAmount, refundableAmount };
  }

  // The payment's own events (a store's creation, once per operator, is not one of them).
  const events = (receipt: TransactionReceipt) => parseEventLogs({ abi: escrowAbi, logs: receipt.logs }).filter((log) => log.eventName !== 'TokenStoreCreated');
  const tokenStore = (operator: Address) => h.publicClient.readContract({ address: escrow, abi: escrowAbi, functionName: 'getTokenStore', args: [operator] });

  return { ...addresses, addresses, terms, signHold, send, refusal, state, events, tokenStore };
}
