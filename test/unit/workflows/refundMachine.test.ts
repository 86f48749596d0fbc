// The refund machine (workflows/refundMachine.ts) through the functions the workflows use: openRefund
// makes the record, stepRefund moves it (the record's `stage` is the machine's state). Every
// transition, every precheck failure in the token's order, and what each state refuses; retryRefund
// (workflows/refundProcedure.ts) starts a failed release over.
import { describe, it, expect } from 'vitest';
import type { Address, Hex } from 'viem';
import type { RefundAttempt } from '../../../domain/activityContract.js';
import type { CaptureFailure, OnchainNonceFacts, RefundPrecheckFacts } from '../../../domain/facts.js';
import type { RefundRecord, RefundStage } from '../../../domain/refunds.js';
import {
  REFUND_MAX_ATTEMPTS,
  isRefundFinal,
  openRefund,
  refundFailureOf,
  refundPrecheckFailure,
  stepRefund,
  type RefundMachineEvent,
} from '../../../workflows/refundMachine.js';
import { retryRefund } from '../../../workflows/refundProcedure.js';

const PAYER: Address = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const MERCHANT: Address = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const RUN_ID = '0195f2a4-7c3e-7d61-9a4b-2f1e8c0d5b77';
const NONCE: Hex = `0x${'ee'.repeat(32)}`;
const OUR_TX: Hex = `0x${'aa'.repeat(32)}`;
const OTHER_TX: Hex = `0x${'bb'.repeat(32)}`;
const BLOCK_HASH: Hex = `0x${'cc'.repeat(32)}`;
const AMOUNT = '3000000'; // 3 tokens
const VALID_BEFORE = '1700000300';

function at(n: number): string {
  return new Date(Date.UTC(2024, 0, 1, 0, 0, n)).toISOString();
}

const fields = {
  sequence: 1,
  authorizationRunId: RUN_ID,
  orderId: 'order-1',
  payer: PAYER,
  merchant: MERCHANT,
  amountMinor: AMOUNT,
  reason: 'damaged item',
  createdAt: at(0),
  requestKey: 'key-digest',
  requestFingerprint: 'body-digest',
};

const open = (): RefundRecord => openRefund(fields);

/** Facts under which a refund may be sent: nonce unused, merchant funded, nothing blocked. */
function goodFacts(overrides: Partial<RefundPrecheckFacts> = {}): RefundPrecheckFacts {
  return {
    chainTime: '1700000000',
    onchain: { status: 'unused' },
    merchantBalance: '50000000',
    merchantGasBalance: '2000000000000000',
    requiredGas: '1000000000000000',
    paused: false,
    merchantBlacklisted: false,
    payerBlacklisted: false,
    ...overrides,
  };
}

function attempt(facts: Partial<RefundPrecheckFacts> = {}, overrides: Partial<RefundAttempt> = {}): RefundAttempt {
  return {
    nonce: NONCE,
    facts: goodFacts(facts),
    prepared: {
      request: {
        primaryType: 'TransferWithAuthorization',
        authorization: { from: MERCHANT, to: PAYER, value: AMOUNT, validAfter: '0', validBefore: VALID_BEFORE, nonce: NONCE },
        signature: `0x${'11'.repeat(65)}`,
      },
    },
    simulationFailure: null,
    ...overrides,
  };
}

const used = (transactionHash: Hex = OTHER_TX): OnchainNonceFacts => ({ status: 'used', transactionHash, blockNumber: '4242', blockHash: BLOCK_HASH });
const canceled = (transactionHash: Hex = OTHER_TX): OnchainNonceFacts => ({ status: 'canceled', transactionHash, blockNumber: '4242', blockHash: BLOCK_HASH });

const paused: CaptureFailure = { code: 'token_policy_blocked', message: 'the token is paused' };

function step(record: RefundRecord, ...events: RefundMachineEvent[]): RefundRecord {
  return events.reduce(stepRefund, record);
}

const toSubmitting = (): RefundRecord => stepRefund(open(), { type: 'PRECHECKED', at: at(1), attempt: attempt() });
const toSubmitted = (): RefundRecord => stepRefund(toSubmitting(), { type: 'SUBMITTED', at: at(2), transactionHash: OUR_TX });
const toPreconfirmed = (): RefundRecord =>
  stepRefund(toSubmitted(), { type: 'INCLUDED', at: at(3), transactionHash: OUR_TX, blockNumber: '100', blockHash: BLOCK_HASH });
const toSucceeded = (): RefundRecord =>
  stepRefund(toPreconfirmed(), { type: 'CONFIRMED', at: at(4), transactionHash: OUR_TX, blockNumber: '100', blockHash: BLOCK_HASH });
const toAwaitingExpiry = (): RefundRecord => stepRefund(toSubmitted(), { type: 'REVERTED', at: at(3), failure: paused });
const toFailed = (): RefundRecord => stepRefund(open(), { type: 'PRECHECKED', at: at(1), attempt: attempt({ paused: true }) });

/** One event of every type, each shaped so that a guard on it would pass where there is one. */
const sampleEvents: { [K in RefundMachineEvent['type']]: Extract<RefundMachineEvent, { type: K }> } = {
  PRECHECKED: { type: 'PRECHECKED', at: at(50), attempt: attempt() },
  PREPARE_FAILED: { type: 'PREPARE_FAILED', at: at(50), failure: { code: 'internal_error', message: 'no key for the merchant' } },
  SUBMITTED: { type: 'SUBMITTED', at: at(50), transactionHash: OTHER_TX },
  NOT_SENT: { type: 'NOT_SENT', at: at(50), failure: { code: 'chain_unavailable', message: 'relayer down' } },
  INCLUDED: { type: 'INCLUDED', at: at(50), transactionHash: OTHER_TX, blockNumber: '101', blockHash: BLOCK_HASH },
  CONFIRMED: { type: 'CONFIRMED', at: at(50), transactionHash: OTHER_TX, blockNumber: '101', blockHash: BLOCK_HASH },
  REORGED: { type: 'REORGED', at: at(50) },
  REVERTED: { type: 'REVERTED', at: at(50), failure: paused },
  EXPIRED: { type: 'EXPIRED', at: at(50) },
  NONCE_STATE: { type: 'NONCE_STATE', at: at(50), onchain: used() },
};
const allEventTypes = Object.keys(sampleEvents) as RefundMachineEvent['type'][];

describe('openRefund', () => {
  it('makes a prechecking record with no progress, keeping every field given', () => {
    expect(open()).toEqual({
      ...fields,
      stage: 'prechecking',
      nonce: null,
      fromBlock: null,
      attempts: 0,
      validBefore: null,
      transactionHash: null,
      blockNumber: null,
      blockHash: null,
      failure: null,
      lastError: null,
      preconfirmedAt: null,
      succeededAt: null,
      failedAt: null,
    });
    expect(isRefundFinal(open())).toBe(false);
  });
});

describe('prechecking', () => {
  it('PRECHECKED with a good attempt → submitting: attempts + 1, nonce and validBefore recorded', () => {
    const before = open();
    const after = stepRefund(before, { type: 'PRECHECKED', at: at(1), attempt: attempt() });
    expect(after).toEqual({ ...before, stage: 'submitting', attempts: 1, nonce: NONCE, validBefore: VALID_BEFORE });
  });

  it('passes with the merchant balance exactly the refund, and gas exactly what is needed', () => {
    const after = stepRefund(open(), {
      type: 'PRECHECKED',
      at: at(1),
      attempt: attempt({ merchantBalance: AMOUNT, merchantGasBalance: '777', requiredGas: '777' }),
    });
    expect(after.stage).toBe('submitting');
  });

  it('a later attempt counts on from the earlier ones and forgets their transaction', () => {
    const before: RefundRecord = { ...open(), attempts: 2, nonce: NONCE, validBefore: '1699999000', transactionHash: OUR_TX };
    const after = stepRefund(before, { type: 'PRECHECKED', at: at(1), attempt: attempt() });
    expect(after).toMatchObject({ stage: 'submitting', attempts: 3, validBefore: VALID_BEFORE, transactionHash: null, blockNumber: null, blockHash: null });
  });

  const failures: [string, Partial<RefundPrecheckFacts>, Partial<RefundAttempt>, CaptureFailure][] = [
    ['the token is paused', { paused: true }, {}, { code: 'token_policy_blocked', message: 'the token is paused' }],
    ['the merchant is blacklisted', { merchantBlacklisted: true }, {}, { code: 'token_policy_blocked', message: 'the token has blacklisted the merchant' }],
    ['the payer is blacklisted', { payerBlacklisted: true }, {}, { code: 'token_policy_blocked', message: 'the token has blacklisted the payer' }],
    [
      'the merchant balance is one unit short',
      { merchantBalance: '2999999' },
      {},
      { code: 'insufficient_merchant_balance', message: 'the merchant key holds 2.999999, the refund needs 3' },
    ],
    [
      'the merchant cannot pay for gas',
      { merchantGasBalance: '999', requiredGas: '1000' },
      {},
      { code: 'insufficient_merchant_gas', message: 'the merchant key has 999 wei for gas, a refund needs about 1000' },
    ],
    [
      'the simulation ran out of balance',
      {},
      { simulationFailure: { code: 'insufficient_balance', message: 'the token refused the capture: ERC20: transfer amount exceeds balance' } },
      { code: 'insufficient_merchant_balance', message: 'the merchant key cannot cover the refund: ERC20: transfer amount exceeds balance' },
    ],
    [
      'the simulation reverted',
      {},
      { simulationFailure: { code: 'capture_reverted', message: 'the capture reverted' } },
      { code: 'refund_reverted', message: 'the refund reverted' },
    ],
    [
      'the simulation was refused by token policy',
      {},
      { simulationFailure: { code: 'token_policy_blocked', message: 'the capture was blocked: Blacklistable: account is blacklisted' } },
      { code: 'token_policy_blocked', message: 'the refund was blocked: Blacklistable: account is blacklisted' },
    ],
    ['nothing could be signed', {}, { prepared: null }, { code: 'refund_reverted', message: 'the refund could not be prepared' }],
    [
      "the refund's nonce was canceled onchain",
      { onchain: canceled() },
      { prepared: null },
      { code: 'refund_reverted', message: "the refund's nonce was canceled onchain" },
    ],
  ];

  for (const [why, facts, overrides, failure] of failures) {
    it(`fails when ${why}: failed (final) with ${failure.code}, nothing sent`, () => {
      const before = open();
      const after = stepRefund(before, { type: 'PRECHECKED', at: at(7), attempt: attempt(facts, overrides) });
      expect(after).toEqual({ ...before, stage: 'failed', failure: { ...failure, at: at(7) }, failedAt: at(7) });
      expect(after.attempts).toBe(0);
      expect(isRefundFinal(after)).toBe(true);
    });
  }

  // The token reverts for the first of these it meets: the refund names the same one.
  const order: [string, Partial<RefundPrecheckFacts>, Partial<RefundAttempt>, string][] = [
    [
      'canceled before paused',
      { onchain: canceled(), paused: true, merchantBlacklisted: true, merchantBalance: '0' },
      { prepared: null },
      "the refund's nonce was canceled onchain",
    ],
    [
      'paused before a blacklisted merchant',
      { paused: true, merchantBlacklisted: true, payerBlacklisted: true, merchantBalance: '0', merchantGasBalance: '0' },
      {},
      'the token is paused',
    ],
    [
      'a blacklisted merchant before a blacklisted payer',
      { merchantBlacklisted: true, payerBlacklisted: true, merchantBalance: '0' },
      {},
      'the token has blacklisted the merchant',
    ],
    [
      'a blacklisted payer before the merchant balance',
      { payerBlacklisted: true, merchantBalance: '0', merchantGasBalance: '0' },
      {},
      'the token has blacklisted the payer',
    ],
    ['the merchant balance before gas', { merchantBalance: '0', merchantGasBalance: '0' }, {}, 'the merchant key holds 0, the refund needs 3'],
    [
      'gas before the simulation',
      { merchantGasBalance: '0' },
      { simulationFailure: { code: 'capture_reverted', message: 'the capture reverted' } },
      'the merchant key has 0 wei for gas, a refund needs about 1000000000000000',
    ],
  ];

  for (const [why, facts, overrides, message] of order) {
    it(`names the token's first reason: ${why}`, () => {
      const after = stepRefund(open(), { type: 'PRECHECKED', at: at(7), attempt: attempt(facts, overrides) });
      expect(after.stage).toBe('failed');
      expect(after.failure?.message).toBe(message);
    });
  }

  it('an attempt whose nonce is already used onchain → submitted, following that transaction', () => {
    // A retry after a crash: the last attempt landed. Nothing is signed again, whatever else the facts say.
    const before: RefundRecord = { ...open(), attempts: 1, nonce: NONCE, validBefore: '1699999000' };
    const after = stepRefund(before, {
      type: 'PRECHECKED',
      at: at(8),
      attempt: attempt({ onchain: used(OTHER_TX), paused: true, merchantBalance: '0' }, { prepared: null }),
    });
    expect(after).toEqual({ ...before, stage: 'submitted', transactionHash: OTHER_TX, blockNumber: null, blockHash: null });
    expect(after.attempts).toBe(1);
    expect(after.failure).toBeNull();
  });

  it('PREPARE_FAILED → failed (final) with that failure', () => {
    const before = open();
    const after = stepRefund(before, {
      type: 'PREPARE_FAILED',
      at: at(2),
      failure: { code: 'internal_error', message: 'this worker has no key for the merchant' },
    });
    expect(after).toEqual({
      ...before,
      stage: 'failed',
      failure: { code: 'internal_error', message: 'this worker has no key for the merchant', at: at(2) },
      failedAt: at(2),
    });
  });
});

describe('submitting', () => {
  it('SUBMITTED → submitted with the transaction', () => {
    const before = toSubmitting();
    const after = stepRefund(before, { type: 'SUBMITTED', at: at(2), transactionHash: OUR_TX });
    expect(after).toEqual({ ...before, stage: 'submitted', transactionHash: OUR_TX });
  });

  it('NOT_SENT → awaitingExpiry with the reason as lastError, in a refund’s words', () => {
    const before = toSubmitting();
    const after = stepRefund(before, { type: 'NOT_SENT', at: at(2), failure: { code: 'capture_reverted', message: 'the relayer refused the capture' } });
    expect(after).toEqual({ ...before, stage: 'awaitingExpiry', lastError: { code: 'refund_reverted', message: 'the relayer refused the refund', at: at(2) } });
    expect(after.failure).toBeNull();
  });
});

describe('submitted', () => {
  it('INCLUDED → preconfirmed with the block and preconfirmedAt', () => {
    const before = toSubmitted();
    const after = stepRefund(before, { type: 'INCLUDED', at: at(3), transactionHash: OTHER_TX, blockNumber: '100', blockHash: BLOCK_HASH });
    // A fee-bumped replacement is what landed: its hash is the refund's.
    expect(after).toEqual({ ...before, stage: 'preconfirmed', transactionHash: OTHER_TX, blockNumber: '100', blockHash: BLOCK_HASH, preconfirmedAt: at(3) });
  });

  it('REVERTED → awaitingExpiry with lastError (mapped by refundFailureOf), the transaction kept', () => {
    const before = toSubmitted();
    const after = stepRefund(before, {
      type: 'REVERTED',
      at: at(3),
      failure: { code: 'insufficient_balance', message: 'the token refused the capture: too little' },
    });
    expect(after).toEqual({
      ...before,
      stage: 'awaitingExpiry',
      lastError: { code: 'insufficient_merchant_balance', message: 'the merchant key cannot cover the refund: too little', at: at(3) },
    });
  });

  it(`EXPIRED while attempts < ${REFUND_MAX_ATTEMPTS} → prechecking again, lastError chain_unavailable, transaction forgotten`, () => {
    const before = toSubmitted();
    expect(before.attempts).toBe(1);
    const after = stepRefund(before, { type: 'EXPIRED', at: at(9) });
    expect(after).toEqual({
      ...before,
      stage: 'prechecking',
      transactionHash: null,
      lastError: { code: 'chain_unavailable', message: `refund attempt 1 was not mined before its validBefore ${VALID_BEFORE}`, at: at(9) },
    });
    expect(after.nonce).toBe(NONCE);
  });

  it(`EXPIRED after ${REFUND_MAX_ATTEMPTS} attempts → awaitingExpiry: failed only once a final block shows the nonce unused`, () => {
    const before: RefundRecord = { ...toSubmitted(), attempts: REFUND_MAX_ATTEMPTS };
    const after = stepRefund(before, { type: 'EXPIRED', at: at(9) });
    const why = { code: 'chain_unavailable' as const, message: `the refund was not mined in ${REFUND_MAX_ATTEMPTS} attempts; nothing moved`, at: at(9) };
    expect(after).toEqual({ ...before, stage: 'awaitingExpiry', lastError: why });
    expect(isRefundFinal(after)).toBe(false);
    // A reorg could still bring the last attempt back until a final block is past its window.
    const dead = stepRefund(after, { type: 'NONCE_STATE', at: at(10), onchain: { status: 'unused' } });
    expect(dead).toMatchObject({ stage: 'failed', failure: why, failedAt: at(10), transactionHash: before.transactionHash });
    const landed = stepRefund(after, {
      type: 'NONCE_STATE',
      at: at(10),
      onchain: { status: 'used', transactionHash: OTHER_TX, blockNumber: '200', blockHash: BLOCK_HASH },
    });
    expect(landed).toMatchObject({ stage: 'submitted', transactionHash: OTHER_TX });
  });

  it('refused at the next precheck after an unmined attempt → awaitingExpiry (that attempt may still land), failed only with the nonce unused at depth', () => {
    const expired = stepRefund(toSubmitted(), { type: 'EXPIRED', at: at(9) });
    const refused = stepRefund(expired, { type: 'PRECHECKED', at: at(10), attempt: attempt({ paused: true }) });
    const why = { code: 'token_policy_blocked' as const, message: 'the token is paused', at: at(10) };
    expect(refused).toEqual({ ...expired, stage: 'awaitingExpiry', lastError: why });
    expect(refused.validBefore).toBe(VALID_BEFORE);
    expect(stepRefund(refused, { type: 'NONCE_STATE', at: at(11), onchain: { status: 'unused' } })).toMatchObject({ stage: 'failed', failure: why });
    expect(stepRefund(refused, { type: 'NONCE_STATE', at: at(11), onchain: used(OUR_TX) })).toMatchObject({ stage: 'submitted', transactionHash: OUR_TX });
    const unprepared = stepRefund(expired, { type: 'PREPARE_FAILED', at: at(10), failure: { code: 'internal_error', message: 'no key' } });
    expect(unprepared).toMatchObject({ stage: 'awaitingExpiry', lastError: { code: 'internal_error', message: 'no key', at: at(10) }, failure: null });
  });

  it(`signs ${REFUND_MAX_ATTEMPTS} attempts with the same nonce, then waits for the last one's window to close for good`, () => {
    let record = open();
    for (let n = 1; n <= REFUND_MAX_ATTEMPTS; n += 1) {
      record = step(
        record,
        { type: 'PRECHECKED', at: at(10 * n), attempt: attempt() },
        { type: 'SUBMITTED', at: at(10 * n + 1), transactionHash: OUR_TX },
        { type: 'EXPIRED', at: at(10 * n + 2) },
      );
      expect(record.attempts).toBe(n);
      expect(record.nonce).toBe(NONCE);
      expect(record.stage).toBe(n < REFUND_MAX_ATTEMPTS ? 'prechecking' : 'awaitingExpiry');
    }
    record = stepRefund(record, { type: 'NONCE_STATE', at: at(99), onchain: { status: 'unused' } });
    expect(record.stage).toBe('failed');
    expect(record.failure?.code).toBe('chain_unavailable');
  });
});

describe('preconfirmed', () => {
  it('CONFIRMED → succeeded (final): block, succeededAt, lastError cleared', () => {
    const before = { ...toPreconfirmed(), lastError: { code: 'chain_unavailable' as const, message: 'attempt 1 expired', at: at(1) } };
    const after = stepRefund(before, { type: 'CONFIRMED', at: at(4), transactionHash: OUR_TX, blockNumber: '101', blockHash: BLOCK_HASH });
    expect(after).toEqual({
      ...before,
      stage: 'succeeded',
      transactionHash: OUR_TX,
      blockNumber: '101',
      blockHash: BLOCK_HASH,
      succeededAt: at(4),
      lastError: null,
    });
    expect(after.failure).toBeNull();
    expect(isRefundFinal(after)).toBe(true);
  });

  it('REORGED → submitted, forgetting the block and preconfirmedAt but not the transaction', () => {
    const before = toPreconfirmed();
    const after = stepRefund(before, { type: 'REORGED', at: at(4) });
    expect(after).toEqual({ ...before, stage: 'submitted', blockNumber: null, blockHash: null, preconfirmedAt: null });
    expect(after.transactionHash).toBe(OUR_TX);
  });
});

describe('awaitingExpiry', () => {
  it('NONCE_STATE used → submitted, following the transaction that used it', () => {
    const before = toAwaitingExpiry();
    const after = stepRefund(before, { type: 'NONCE_STATE', at: at(9), onchain: used(OTHER_TX) });
    expect(after).toEqual({ ...before, stage: 'submitted', transactionHash: OTHER_TX, blockNumber: null, blockHash: null });
  });

  it('NONCE_STATE unused → failed with the last error as the failure', () => {
    const before = toAwaitingExpiry();
    expect(before.lastError).toEqual({ ...paused, at: at(3) });
    const after = stepRefund(before, { type: 'NONCE_STATE', at: at(9), onchain: { status: 'unused' } });
    // The last attempt's transaction stays: evidence of the attempt, and of the gas it cost.
    expect(after).toEqual({ ...before, stage: 'failed', failure: before.lastError, failedAt: at(9) });
  });

  it('NONCE_STATE canceled → failed too: the refund never landed', () => {
    const after = stepRefund(toAwaitingExpiry(), { type: 'NONCE_STATE', at: at(9), onchain: canceled() });
    expect(after.stage).toBe('failed');
    expect(after.failure).toEqual({ ...paused, at: at(3) });
  });

  it('NONCE_STATE unused with no last error on the record → failed with refund_reverted', () => {
    const before: RefundRecord = { ...toAwaitingExpiry(), lastError: null };
    const after = stepRefund(before, { type: 'NONCE_STATE', at: at(9), onchain: { status: 'unused' } });
    expect(after.stage).toBe('failed');
    expect(after.failure).toEqual({ code: 'refund_reverted', message: 'the refund transaction did not land', at: at(9) });
  });

  it('a refused attempt that landed after all is followed to success', () => {
    const after = step(
      toAwaitingExpiry(),
      { type: 'NONCE_STATE', at: at(9), onchain: used(OUR_TX) },
      { type: 'INCLUDED', at: at(10), transactionHash: OUR_TX, blockNumber: '100', blockHash: BLOCK_HASH },
      { type: 'CONFIRMED', at: at(11), transactionHash: OUR_TX, blockNumber: '100', blockHash: BLOCK_HASH },
    );
    expect(after).toMatchObject({ stage: 'succeeded', transactionHash: OUR_TX, succeededAt: at(11), lastError: null, failure: null });
  });
});

describe('which events each state accepts', () => {
  const table: [RefundStage, () => RefundRecord, RefundMachineEvent['type'][]][] = [
    ['prechecking', open, ['PRECHECKED', 'PREPARE_FAILED']],
    // EXPIRED: an attempt followed by one activity that never landed in its window.
    ['submitting', toSubmitting, ['EXPIRED', 'NOT_SENT', 'SUBMITTED']],
    ['submitted', toSubmitted, ['EXPIRED', 'INCLUDED', 'REVERTED']],
    ['preconfirmed', toPreconfirmed, ['CONFIRMED', 'REORGED']],
    ['awaitingExpiry', toAwaitingExpiry, ['NONCE_STATE']],
    ['succeeded', toSucceeded, []],
    ['failed', toFailed, []],
  ];

  for (const [stage, make, accepted] of table) {
    it(`${stage}: ${accepted.length ? `changes on exactly ${accepted.join(', ')}` : 'final, accepts nothing'}`, () => {
      const record = make();
      expect(record.stage).toBe(stage);
      const changed = allEventTypes.filter((type) => JSON.stringify(stepRefund(record, sampleEvents[type])) !== JSON.stringify(record));
      expect(changed.sort()).toEqual([...accepted].sort());
    });

    it(`${stage}: every event that does not apply leaves the record unchanged`, () => {
      const record = make();
      const refused = allEventTypes.filter((type) => !accepted.includes(type));
      expect(refused.length).toBeGreaterThan(0);
      for (const type of refused) expect(stepRefund(record, sampleEvents[type])).toEqual(record);
    });
  }

  it('final records stay final under every branch of every guard', () => {
    for (const record of [toSucceeded(), toFailed()]) {
      expect(isRefundFinal(record)).toBe(true);
      for (const event of [
        { type: 'PRECHECKED', at: at(70), attempt: attempt({ paused: true }) },
        { type: 'PRECHECKED', at: at(70), attempt: attempt({ onchain: used() }) },
        { type: 'EXPIRED', at: at(70) },
        { type: 'NONCE_STATE', at: at(70), onchain: { status: 'unused' } },
      ] as const) {
        expect(stepRefund(record, event)).toEqual(record);
      }
    }
  });
});

describe('refundFailureOf', () => {
  it.each([
    [
      { code: 'insufficient_balance', message: 'the token refused the capture: ERC20: transfer amount exceeds balance' },
      { code: 'insufficient_merchant_balance', message: 'the merchant key cannot cover the refund: ERC20: transfer amount exceeds balance' },
    ],
    [
      { code: 'insufficient_balance', message: 'ERC20: transfer amount exceeds balance' },
      { code: 'insufficient_merchant_balance', message: 'the merchant key cannot cover the refund: ERC20: transfer amount exceeds balance' },
    ],
    [
      { code: 'capture_reverted', message: 'the capture transaction reverted' },
      { code: 'refund_reverted', message: 'the refund transaction reverted' },
    ],
    [
      { code: 'chain_unavailable', message: 'the node stopped answering' },
      { code: 'chain_unavailable', message: 'the node stopped answering' },
    ],
  ] satisfies [CaptureFailure, CaptureFailure][])('%j → %j', (failure, expected) => {
    expect(refundFailureOf(failure)).toEqual(expected);
  });

  it('refundPrecheckFailure with every fact good and a prepared attempt still names a reason', () => {
    expect(refundPrecheckFailure({ amountMinor: AMOUNT }, attempt())).toEqual({ code: 'refund_reverted', message: 'the refund could not be prepared' });
  });
});

describe('retryRefund', () => {
  it('starts a failed refund over: prechecking, its failure now the lastError, same nonce', () => {
    const failed = toFailed();
    const retried = retryRefund(failed);
    expect(retried).toEqual({ ...failed, stage: 'prechecking', lastError: failed.failure, failure: null, failedAt: null, transactionHash: null });
    expect(isRefundFinal(retried)).toBe(false);
  });

  it('keeps the last transaction the failed record names until a new attempt is signed', () => {
    const retried = retryRefund({ ...toFailed(), transactionHash: OUR_TX });
    expect(retried.transactionHash).toBe(OUR_TX);
    expect(retried.stage).toBe('prechecking');
  });

  it('a failed refund without a failure keeps its lastError', () => {
    const lastError = { code: 'chain_unavailable' as const, message: 'the node stopped answering', at: at(5) };
    const retried = retryRefund({ ...toFailed(), failure: null, lastError });
    expect(retried.lastError).toEqual(lastError);
  });

  it('a retried refund that landed in the meantime follows that transaction, never signing again', () => {
    const failed = step(toAwaitingExpiry(), { type: 'NONCE_STATE', at: at(9), onchain: { status: 'unused' } });
    expect(failed.stage).toBe('failed');
    const retried = retryRefund(failed);
    expect(retried.nonce).toBe(NONCE);
    const after = stepRefund(retried, { type: 'PRECHECKED', at: at(20), attempt: attempt({ onchain: used(OTHER_TX) }, { prepared: null }) });
    expect(after).toMatchObject({ stage: 'submitted', nonce: NONCE, transactionHash: OTHER_TX, failure: null });
  });

  it('a retried refund can succeed', () => {
    const after = step(
      retryRefund(toFailed()),
      { type: 'PRECHECKED', at: at(20), attempt: attempt() },
      { type: 'SUBMITTED', at: at(21), transactionHash: OUR_TX },
      { type: 'INCLUDED', at: at(22), transactionHash: OUR_TX, blockNumber: '100', blockHash: BLOCK_HASH },
      { type: 'CONFIRMED', at: at(23), transactionHash: OUR_TX, blockNumber: '100', blockHash: BLOCK_HASH },
    );
    expect(after).toMatchObject({ stage: 'succeeded', attempts: 1, succeededAt: at(23), failure: null, failedAt: null, lastError: null });
  });
});
