// Shared fixtures for the machine tests: one authorization, fact sets, and helpers that walk the
// pure machine (initialTransition / transition) to each state. No actors, no timers.
import { expect } from 'vitest';
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import type { Address, Hex } from 'viem';
import { authorizationMachine, type AuthorizationEvent, type MachineInput } from '../../../workflows/machine.js';
import type { AuthorizationMessage, TokenDomain } from '../../../domain/eip3009.js';
import type { CapturePrecheckFacts, OnchainConsumption } from '../../../domain/facts.js';
import type { RefundRecord } from '../../../domain/refunds.js';

export type Snapshot = SnapshotFrom<typeof authorizationMachine>;
export type EventType = AuthorizationEvent['type'];
export type EventOf<T extends EventType> = Extract<AuthorizationEvent, { type: T }>;

export const PAYER: Address = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
export const MERCHANT: Address = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
export const TOKEN: Address = '0x5FbDB2315678afecb367f032d93F642f64180aa3';

export const VALUE = '12500000'; // 12.5 tokens in minor units
export const VALID_AFTER = 1_700_000_000n;
export const VALID_BEFORE = 1_700_000_900n;

export const input: MachineInput = { orderId: 'order-1', payer: PAYER, value: VALUE, primaryType: 'ReceiveWithAuthorization' };

export const domain: TokenDomain = { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: TOKEN };

export const authorization: AuthorizationMessage = {
  from: PAYER,
  to: MERCHANT,
  value: VALUE,
  validAfter: VALID_AFTER.toString(),
  validBefore: VALID_BEFORE.toString(),
  nonce: `0x${'ab'.repeat(32)}`,
};

export const SIGNATURE: Hex = `0x${'11'.repeat(65)}`;
export const OUR_TX: Hex = `0x${'aa'.repeat(32)}`;
export const OTHER_TX: Hex = `0x${'bb'.repeat(32)}`;
export const BLOCK_HASH: Hex = `0x${'cc'.repeat(32)}`;
export const OTHER_BLOCK_HASH: Hex = `0x${'dd'.repeat(32)}`;

/** Distinct, increasing workflow times. */
export function at(n: number): string {
  return new Date(Date.UTC(2024, 0, 1, 0, 0, n)).toISOString();
}

/** Facts under which a capture may proceed: inside the window, ample balances, nothing blocked. */
export function goodFacts(overrides: Partial<CapturePrecheckFacts> = {}): CapturePrecheckFacts {
  return {
    chainTime: (VALID_AFTER + 100n).toString(),
    authorizationUsed: false,
    payerBalance: '50000000',
    merchantGasBalance: '2000000000000000',
    requiredGas: '1000000000000000',
    paused: false,
    payerBlacklisted: false,
    merchantBlacklisted: false,
    ...overrides,
  };
}

export function consumption(status: 'used' | 'canceled', transactionHash: Hex = OTHER_TX): OnchainConsumption {
  return { status, transactionHash, blockNumber: '4242', blockHash: BLOCK_HASH };
}

export function start(): Snapshot {
  return initialTransition(authorizationMachine, input)[0];
}

export function send(snapshot: Snapshot, event: AuthorizationEvent): Snapshot {
  return transition(authorizationMachine, snapshot, event)[0];
}

/** Sends events in order, returning the final snapshot. */
export function run(snapshot: Snapshot, ...events: AuthorizationEvent[]): Snapshot {
  return events.reduce(send, snapshot);
}

export const toDrafted = (): Snapshot => send(start(), { type: 'DRAFTED', at: at(1), domain, authorization });
export const toVerifyingSignature = (): Snapshot => send(toDrafted(), { type: 'SIGNATURE_SUBMITTED', at: at(2) });
export const toStored = (): Snapshot => send(toVerifyingSignature(), { type: 'SIGNATURE_CHECKED', at: at(3), signature: SIGNATURE, check: { valid: true } });
export const toPrechecking = (from: Snapshot = toStored()): Snapshot => send(from, { type: 'CAPTURE_REQUESTED', at: at(4) });
export const toVerifyingCancellation = (): Snapshot => send(toStored(), { type: 'CANCEL_REQUESTED', at: at(4) });
export const toSubmitting = (from: Snapshot = toStored()): Snapshot => send(toPrechecking(from), { type: 'PRECHECKED', at: at(5), facts: goodFacts() });
export const toSubmitted = (): Snapshot => send(toSubmitting(), { type: 'CAPTURE_SUBMITTED', at: at(6), transactionHash: OUR_TX });
export const toPreconfirmed = (): Snapshot => send(toSubmitted(), { type: 'CAPTURE_PRECONFIRMED', at: at(7), blockNumber: '100', blockHash: BLOCK_HASH });
export const toCanceling = (): Snapshot => send(toVerifyingCancellation(), { type: 'CANCEL_SIGNATURE_CHECKED', at: at(5), check: { valid: true } });

/** A partial capture's release (sequence 0) at the stage given. */
export const releaseRecord = (stage: RefundRecord['stage'] = 'succeeded'): RefundRecord => ({
  sequence: 0,
  authorizationRunId: '00000000-0000-4000-8000-000000000001',
  orderId: 'order-1',
  payer: PAYER,
  merchant: MERCHANT,
  amountMinor: '2500000',
  reason: 'partial_capture',
  stage,
  nonce: `0x${'ee'.repeat(32)}`,
  attempts: 1,
  validBefore: '1700001000',
  transactionHash: stage === 'prechecking' ? null : OTHER_TX,
  blockNumber: stage === 'succeeded' ? '102' : null,
  blockHash: stage === 'succeeded' ? OTHER_BLOCK_HASH : null,
  failure: null,
  lastError: null,
  createdAt: at(8),
  preconfirmedAt: null,
  succeededAt: stage === 'succeeded' ? at(9) : null,
  failedAt: null,
  requestKey: null,
  requestFingerprint: null,
});

/** What a partial capture keeps: 10 of the 12.5 tokens (releaseRecord gives back the other 2.5). */
export const KEPT = '10000000';

/** The same walk as toPrechecking … toPreconfirmed, for a capture that keeps `amount` only. */
export const toPartialPrechecking = (amount: string = KEPT, from: Snapshot = toStored()): Snapshot =>
  send(from, { type: 'CAPTURE_REQUESTED', at: at(4), amount });
export const toPartialSubmitting = (amount: string = KEPT): Snapshot =>
  send(toPartialPrechecking(amount), { type: 'PRECHECKED', at: at(5), facts: goodFacts() });
export const toPartialSubmitted = (amount: string = KEPT): Snapshot =>
  send(toPartialSubmitting(amount), { type: 'CAPTURE_SUBMITTED', at: at(6), transactionHash: OUR_TX });
export const toPartialPreconfirmed = (amount: string = KEPT): Snapshot =>
  send(toPartialSubmitted(amount), { type: 'CAPTURE_PRECONFIRMED', at: at(7), blockNumber: '100', blockHash: BLOCK_HASH });
/** A partial capture at the confirmation depth: the difference is going back to the payer. */
export const toReleasing = (amount: string = KEPT): Snapshot =>
  send(toPartialPreconfirmed(amount), { type: 'CAPTURE_CONFIRMED', at: at(8), transactionHash: OUR_TX, blockNumber: '100', blockHash: BLOCK_HASH });

/**
 * One event of every type, each shaped so that any guard on it would pass (valid checks, a nonce
 * consumed onchain). The mapped type makes the compiler insist every event type is present.
 */
export const sampleEvents: { [K in EventType]: EventOf<K> } = {
  DRAFTED: { type: 'DRAFTED', at: at(50), domain, authorization },
  PRESIGNED_CHECKED: { type: 'PRESIGNED_CHECKED', at: at(50), domain, authorization, signature: SIGNATURE, check: { valid: true } },
  SIGNATURE_SUBMITTED: { type: 'SIGNATURE_SUBMITTED', at: at(50) },
  SIGNATURE_CHECKED: { type: 'SIGNATURE_CHECKED', at: at(50), signature: SIGNATURE, check: { valid: true } },
  CAPTURE_REQUESTED: { type: 'CAPTURE_REQUESTED', at: at(50) },
  PRECHECKED: { type: 'PRECHECKED', at: at(50), facts: goodFacts() },
  CAPTURE_SUBMITTED: { type: 'CAPTURE_SUBMITTED', at: at(50), transactionHash: OUR_TX },
  CAPTURE_PRECONFIRMED: { type: 'CAPTURE_PRECONFIRMED', at: at(50), blockNumber: '100', blockHash: BLOCK_HASH },
  CAPTURE_CONFIRMED: { type: 'CAPTURE_CONFIRMED', at: at(50), transactionHash: OUR_TX, blockNumber: '100', blockHash: BLOCK_HASH },
  CAPTURE_REORGED: { type: 'CAPTURE_REORGED', at: at(50) },
  CAPTURE_FAILED: { type: 'CAPTURE_FAILED', at: at(50), failure: { code: 'capture_reverted', message: 'reverted' } },
  CANCEL_REQUESTED: { type: 'CANCEL_REQUESTED', at: at(50) },
  CANCEL_SIGNATURE_CHECKED: { type: 'CANCEL_SIGNATURE_CHECKED', at: at(50), check: { valid: true } },
  CANCEL_SUBMITTED: { type: 'CANCEL_SUBMITTED', at: at(50), transactionHash: OTHER_TX },
  CANCEL_CONFIRMED: { type: 'CANCEL_CONFIRMED', at: at(50), transactionHash: OTHER_TX, blockNumber: '101' },
  CANCEL_FAILED: { type: 'CANCEL_FAILED', at: at(50), failure: { code: 'chain_unavailable', message: 'rpc down' } },
  VOID: { type: 'VOID', at: at(50), reason: 'order canceled', by: 'operator' },
  DEADLINE_REACHED: { type: 'DEADLINE_REACHED', at: at(50), onchain: consumption('used') },
  NONCE_CONSUMED_ONCHAIN: { type: 'NONCE_CONSUMED_ONCHAIN', at: at(50), onchain: consumption('used') },
  COMMAND_FAILED: { type: 'COMMAND_FAILED', at: at(50), failure: { code: 'chain_unavailable', message: 'the node stopped answering' } },
  RELEASE_UPDATED: { type: 'RELEASE_UPDATED', at: at(50), release: releaseRecord('succeeded') },
  HOLD_SUBMITTED: { type: 'HOLD_SUBMITTED', at: at(50), transactionHash: OUR_TX },
  HOLD_CONFIRMED: { type: 'HOLD_CONFIRMED', at: at(50), transactionHash: OUR_TX, blockNumber: '100', amountMinor: '12500000' },
  HOLD_FAILED: { type: 'HOLD_FAILED', at: at(50), failure: { code: 'capture_reverted', message: 'reverted' } },
  PART_REQUESTED: {
    type: 'PART_REQUESTED',
    at: at(50),
    capture: {
      sequence: 1,
      amountMinor: '1000000',
      final: false,
      requestKey: 'k',
      requestFingerprint: 'f',
      stage: 'pending',
      transactionHash: null,
      blockNumber: null,
      failure: null,
      requestedAt: at(50),
      succeededAt: null,
    },
  },
  PART_SUBMITTED: { type: 'PART_SUBMITTED', at: at(50), sequence: 1, transactionHash: OUR_TX },
  PART_SUCCEEDED: { type: 'PART_SUCCEEDED', at: at(50), sequence: 1, transactionHash: OUR_TX, blockNumber: '100' },
  PART_FAILED: { type: 'PART_FAILED', at: at(50), sequence: 1, failure: { code: 'capture_reverted', message: 'reverted' } },
  HOLD_RELEASED: { type: 'HOLD_RELEASED', at: at(50), kind: 'void', amountMinor: '12500000', transactionHash: OTHER_TX },
};

export const allEventTypes = Object.keys(sampleEvents) as EventType[];

/** The event types the snapshot accepts right now, according to `can`. */
export function acceptedEventTypes(snapshot: Snapshot): EventType[] {
  return allEventTypes.filter((type) => snapshot.can(sampleEvents[type])).sort();
}

/** A refused event must leave the snapshot exactly as it was. */
export function expectUnchanged(before: Snapshot, after: Snapshot): void {
  expect(after.value).toEqual(before.value);
  expect(after.context).toEqual(before.context);
  expect(after.status).toBe(before.status);
}
