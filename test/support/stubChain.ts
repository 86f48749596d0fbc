// A chain that says yes: stub activities for the workflow tests (test/support/workflowEnvironment.ts).
// Drafts are made at once, signatures are the payer's, the pending view allows every capture and
// refund, and a follower reports each transaction confirmed at its depth. Calls are recorded, so a
// test can say what the workflow asked of the chain.
import { randomBytes } from 'node:crypto';
import type { Address, Hex } from 'viem';
import type { AuthorizationActivities, CaptureOnchainRequest, CaptureOnchainResult, WorkerPolicy } from '../../domain/activityContract.js';
import type { TokenDomain } from '../../domain/eip3009.js';

export const MERCHANT: Address = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
export const TOKEN: Address = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
export const DOMAIN: TokenDomain = { name: 'USD Coin', version: '2', chainId: 31337, verifyingContract: TOKEN };
/** Any well-formed signature: the stub verifier accepts it as the payer's. */
export const SIGNATURE: Hex = `0x${'11'.repeat(65)}`;
const BLOCK_HASH: Hex = `0x${'cc'.repeat(32)}`;

const seconds = () => Math.floor(Date.now() / 1000);
const hex32 = (): Hex => `0x${randomBytes(32).toString('hex')}`;

export interface StubChain {
  activities: Partial<AuthorizationActivities>;
  /** Every follower request, in order: captures and refunds (a partial capture's release is a refund). */
  followed: CaptureOnchainRequest[];
  /** How many times each activity ran. */
  calls: Map<string, number>;
}

/** `policy`: the worker's policy as the draft reads it (the workflow keeps it for the attempt's life). */
export function stubChain(policy: Partial<WorkerPolicy> = {}): StubChain {
  const followed: CaptureOnchainRequest[] = [];
  const calls = new Map<string, number>();
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  const workerPolicy: WorkerPolicy = { reconcileIntervalSeconds: 0, maxValiditySeconds: 7 * 86_400, historyLimit: 10_000, ...policy };
  const activities: Partial<AuthorizationActivities> = {
    async draftAuthorization({ payer, value, validForSeconds }) {
      count('draftAuthorization');
      const authorization = { from: payer, to: MERCHANT, value, validAfter: '0', validBefore: String(seconds() + (validForSeconds ?? 3600)), nonce: hex32() };
      return { domain: DOMAIN, authorization, fromBlock: '1', nonceKey: hex32().slice(2), policy: workerPolicy };
    },
    async verifyAuthorizationSignature() {
      count('verifyAuthorizationSignature');
      return { valid: true };
    },
    async prepareCaptureAttempt() {
      count('prepareCaptureAttempt');
      const facts = {
        chainTime: String(seconds()),
        authorizationUsed: false,
        payerBalance: '1000000000000',
        merchantGasBalance: '1000000000000000000',
        requiredGas: '1',
        paused: false,
        payerBlacklisted: false,
        merchantBlacklisted: false,
      };
      return { facts, prepared: { status: 'ready' }, fromBlock: '1' };
    },
    async readNonceState() {
      count('readNonceState');
      return { status: 'unused' };
    },
    async prepareRefund({ merchant, payer, amountMinor }) {
      count('prepareRefund');
      const nonce = hex32();
      const authorization = { from: merchant, to: payer, value: amountMinor, validAfter: '0', validBefore: String(seconds() + 60), nonce };
      return {
        nonce,
        facts: {
          chainTime: String(seconds()),
          blockNumber: '1',
          onchain: { status: 'unused' },
          merchantBalance: '1000000000000',
          merchantGasBalance: '1000000000000000000',
          requiredGas: '1',
          paused: false,
          merchantBlacklisted: false,
          payerBlacklisted: false,
        },
        prepared: { request: { primaryType: 'TransferWithAuthorization', authorization, signature: SIGNATURE } },
        simulationFailure: null,
      };
    },
    async requestRelay() {
      count('requestRelay');
    },
    async captureOnchain(request): Promise<CaptureOnchainResult> {
      count('captureOnchain');
      followed.push(request);
      const { from, nonce } = request.call.authorization;
      const at = new Date().toISOString();
      const transactionHash = hex32();
      return {
        status: 'confirmed',
        by: 'authcap',
        transactionHash,
        blockNumber: '2',
        blockHash: BLOCK_HASH,
        submittedAt: at,
        preconfirmedAt: at,
        confirmedAt: at,
        authorizer: from,
        nonce,
      };
    },
  };
  return { activities, followed, calls };
}
