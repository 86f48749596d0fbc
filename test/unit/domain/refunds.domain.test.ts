// domain/refunds.ts: refund ids (they name where a refund is kept), the refund as callers see it,
// the ledger's totals; and domain/events.ts publicEvent on refund and authorization events.
import { describe, it, expect } from 'vitest';
import type { Address, Hex } from 'viem';
import type { AuthorizationResource } from '../../../domain/authorization.js';
import { eventId, publicEvent, type AuthcapEvent, type RecordedEvent, type RefundEvent } from '../../../domain/events.js';
import { resourceId } from '../../../domain/ids.js';
import {
  ledgerTotals,
  parseRefundId,
  publicRefund,
  refundId,
  refundStages,
  refundStateOf,
  type Refund,
  type RefundRecord,
  type RefundStage,
} from '../../../domain/refunds.js';

const RUN_ID = '0195f2a4-7c3e-7d61-9a4b-2f1e8c0d5b77';
const OTHER_RUN_ID = '0195f2a4-7c3e-7d61-9a4b-2f1e8c0d5b78';
const PAYER: Address = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const MERCHANT: Address = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const TX: Hex = `0x${'aa'.repeat(32)}`;
const BLOCK_HASH: Hex = `0x${'cc'.repeat(32)}`;

/** Every field of the refund object in the spec (issue 18), and no other. */
const REFUND_FIELDS = ['amount', 'authorizationId', 'createdAt', 'failure', 'id', 'lastError', 'orderId', 'reason', 'state', 'succeededAt', 'transactionHash'];

function record(overrides: Partial<RefundRecord> = {}): RefundRecord {
  return {
    sequence: 1,
    authorizationRunId: RUN_ID,
    orderId: 'order-1',
    payer: PAYER,
    merchant: MERCHANT,
    amountMinor: '3000000',
    reason: 'damaged item',
    stage: 'succeeded',
    nonce: `0x${'ee'.repeat(32)}`,
    attempts: 1,
    validBefore: '1700000300',
    transactionHash: TX,
    blockNumber: '100',
    blockHash: BLOCK_HASH,
    failure: null,
    lastError: null,
    createdAt: '2024-01-01T00:00:00.000Z',
    preconfirmedAt: '2024-01-01T00:00:05.000Z',
    succeededAt: '2024-01-01T00:00:10.000Z',
    failedAt: null,
    requestKey: 'key-digest',
    requestFingerprint: 'body-digest',
    ...overrides,
  };
}

describe('refundId / parseRefundId', () => {
  it.each([
    'order-42',
    'ünïcødé-订单-☕-🧾',
    'shop/orders/2024/42',
    'a.b.c',
    '..',
    '.',
    '/',
    'x',
    'with spaces and\ttabs',
    'base64url-ish_-==',
    'a'.repeat(200),
  ])('round-trips the order id %j', (orderId) => {
    for (const sequence of [0, 1, 42, 99_999]) {
      const id = refundId(orderId, RUN_ID, sequence);
      expect(id.startsWith('ref_')).toBe(true);
      expect(id.endsWith(`.${RUN_ID}.${sequence}`)).toBe(true);
      expect(id).not.toMatch(/[\s/+=]/);
      expect(parseRefundId(id)).toEqual({ orderId, authorizationRunId: RUN_ID, sequence, authorizationId: resourceId(orderId, RUN_ID) });
    }
  });

  it('gives different orders, runs and sequences different ids', () => {
    const ids = [refundId('order-1', RUN_ID, 1), refundId('order-2', RUN_ID, 1), refundId('order-1', OTHER_RUN_ID, 1), refundId('order-1', RUN_ID, 2)];
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('names the authorization the refund belongs to', () => {
    expect(parseRefundId(refundId('order-1', RUN_ID, 3))?.authorizationId).toBe(resourceId('order-1', RUN_ID));
  });

  it('reads an upper-case run id in its canonical lower case (one ledger per authorization, whatever the spelling)', () => {
    const parsed = parseRefundId(refundId('order-1', RUN_ID.toUpperCase(), 1));
    expect(parsed?.authorizationRunId).toBe(RUN_ID.toLowerCase());
    expect(parsed?.authorizationId).toBe(resourceId('order-1', RUN_ID.toLowerCase()));
  });

  const encoded = Buffer.from('order-42', 'utf8').toString('base64url');
  // 'MQ' and 'MR' decode to the same byte: only the first is what refundId makes.
  const oneEncoded = Buffer.from('order-1', 'utf8').toString('base64url');

  it.each([
    ['a foreign id', 'wf_12345'],
    ['an authorization id', resourceId('order-42', RUN_ID)],
    ['an empty string', ''],
    ['the prefix alone', 'ref_'],
    ['a different prefix', `rf_${encoded}.${RUN_ID}.1`],
    ['an upper-case prefix', `REF_${encoded}.${RUN_ID}.1`],
    ['no sequence', `ref_${encoded}.${RUN_ID}`],
    ['an empty sequence', `ref_${encoded}.${RUN_ID}.`],
    ['no order id', `ref_.${RUN_ID}.1`],
    ['a run id that is not a uuid', `ref_${encoded}.not-a-run-id.1`],
    ['a run id that is too short', `ref_${encoded}.${RUN_ID.slice(1)}.1`],
    ['a run id that is too long', `ref_${encoded}.${RUN_ID}0.1`],
    ['a run id with non-hex characters', `ref_${encoded}.${RUN_ID.replace(/[a-f]/g, 'z')}.1`],
    ['a negative sequence', `ref_${encoded}.${RUN_ID}.-1`],
    ['a sequence with a leading zero', `ref_${encoded}.${RUN_ID}.01`],
    ['a sequence of two zeros', `ref_${encoded}.${RUN_ID}.00`],
    ['a sequence out of range', `ref_${encoded}.${RUN_ID}.100000`],
    ['a fractional sequence', `ref_${encoded}.${RUN_ID}.1.5`],
    ['a sequence in hex', `ref_${encoded}.${RUN_ID}.0x1`],
    ['trailing space', `ref_${encoded}.${RUN_ID}.1 `],
    ['padded base64', `ref_${Buffer.from('order-4', 'utf8').toString('base64')}.${RUN_ID}.1`],
    ['standard base64 characters', `ref_${Buffer.from('??>', 'utf8').toString('base64')}.${RUN_ID}.1`],
    ['non-canonical base64url (trailing bits set)', `ref_${oneEncoded.slice(0, -1)}R.${RUN_ID}.1`],
    ['an order id that is not UTF-8', `ref_${Buffer.from([0xff, 0xfe]).toString('base64url')}.${RUN_ID}.1`],
    ['an id longer than 400 characters', `ref_${Buffer.from('a'.repeat(300), 'utf8').toString('base64url')}.${RUN_ID}.1`],
  ])('rejects %s → undefined', (_why, id) => {
    expect(parseRefundId(id)).toBeUndefined();
  });

  it('the non-canonical spelling used above really decodes to the same order id', () => {
    expect(oneEncoded.endsWith('Q')).toBe(true);
    expect(Buffer.from(`${oneEncoded.slice(0, -1)}R`, 'base64url').toString('utf8')).toBe('order-1');
    expect(parseRefundId(`ref_${oneEncoded}.${RUN_ID}.1`)?.orderId).toBe('order-1');
  });

  it('rejects what is not a string', () => {
    for (const value of [undefined, null, 42, {}]) expect(parseRefundId(value as unknown as string)).toBeUndefined();
  });
});

describe('refundStateOf', () => {
  it.each([
    ['prechecking', 'pending'],
    ['submitting', 'pending'],
    ['submitted', 'pending'],
    ['preconfirmed', 'pending'],
    ['awaitingExpiry', 'pending'],
    ['succeeded', 'succeeded'],
    ['failed', 'failed'],
  ] as const)('%s → %s', (stage, state) => {
    expect(refundStateOf(stage)).toBe(state);
  });

  it('covers every stage', () => {
    expect([...refundStages].sort()).toEqual(['awaitingExpiry', 'failed', 'prechecking', 'preconfirmed', 'submitted', 'submitting', 'succeeded']);
  });
});

describe('publicRefund', () => {
  it('a succeeded refund: exactly the fields of the spec, amount formatted, ids derived', () => {
    const refund = publicRefund(record());
    expect(Object.keys(refund).sort()).toEqual(REFUND_FIELDS);
    expect(refund).toEqual({
      id: refundId('order-1', RUN_ID, 1),
      authorizationId: resourceId('order-1', RUN_ID),
      orderId: 'order-1',
      amount: '3',
      reason: 'damaged item',
      state: 'succeeded',
      transactionHash: TX,
      failure: null,
      lastError: null,
      createdAt: '2024-01-01T00:00:00.000Z',
      succeededAt: '2024-01-01T00:00:10.000Z',
    });
  });

  it.each([
    ['12500000', '12.5'],
    ['1', '0.000001'],
    ['3000000', '3'],
    ['1234567890123', '1234567.890123'],
  ])('formats %s minor units as %s', (amountMinor, amount) => {
    expect(publicRefund(record({ amountMinor })).amount).toBe(amount);
  });

  it('a failed refund: its last transaction kept (evidence of the attempt), failure without its time, no success time, no lastError', () => {
    const refund = publicRefund(
      record({
        stage: 'failed',
        transactionHash: TX,
        blockNumber: null,
        blockHash: null,
        succeededAt: null,
        failure: { code: 'insufficient_merchant_balance', message: 'the merchant key holds 1, the refund needs 3', at: '2024-01-01T00:00:07.000Z' },
        failedAt: '2024-01-01T00:00:07.000Z',
      }),
    );
    expect(Object.keys(refund).sort()).toEqual(REFUND_FIELDS);
    expect(refund.state).toBe('failed');
    expect(refund.transactionHash).toBe(TX);
    expect(refund.lastError).toBeNull();
    expect(refund.failure).toEqual({ code: 'insufficient_merchant_balance', message: 'the merchant key holds 1, the refund needs 3' });
    expect(refund.succeededAt).toBeNull();
  });

  it('a pending refund: state pending, its transaction shown once sent', () => {
    const lastError = { code: 'chain_unavailable' as const, message: 'attempt 1 was not mined', at: '2024-01-01T00:00:03.000Z' };
    const refund = publicRefund(record({ stage: 'submitted', blockNumber: null, blockHash: null, succeededAt: null, lastError }));
    expect(refund.state).toBe('pending');
    expect(refund.transactionHash).toBe(TX);
    // A pending refund's troubles on the way are not a failure: they are its lastError, being retried.
    expect(refund.failure).toBeNull();
    expect(refund.lastError).toEqual({ code: 'chain_unavailable', message: 'attempt 1 was not mined' });
    expect(publicRefund(record({ stage: 'prechecking', transactionHash: null, succeededAt: null })).transactionHash).toBeNull();
  });

  it("a partial capture's release: sequence 0 and its reason", () => {
    const refund = publicRefund(record({ sequence: 0, reason: 'partial_capture' }));
    expect(refund.id).toBe(refundId('order-1', RUN_ID, 0));
    expect(refund.reason).toBe('partial_capture');
    expect(parseRefundId(refund.id)?.sequence).toBe(0);
  });

  it('a refund without a reason says null', () => {
    expect(publicRefund(record({ reason: null })).reason).toBeNull();
  });

  it("names its network and token, and formats the amount in that token's decimals", () => {
    const chain = { network: 'eip155:31338', token: '0x00000000000000000000000000000000000000e1' as const, symbol: 'DEUR18', decimals: 18 };
    const refund = publicRefund(record({ chain, amountMinor: '1500000000000000001' }));
    expect(refund.network).toBe('eip155:31338');
    expect(refund.token).toEqual({ address: chain.token, symbol: 'DEUR18', decimals: 18 });
    expect(refund.amount).toBe('1.500000000000000001');
    expect(Object.keys(refund).sort()).toEqual([...REFUND_FIELDS, 'network', 'token'].sort());
  });

  it('leaks nothing the record keeps for itself (nonce, payer, merchant, request digests)', () => {
    const json = JSON.stringify(publicRefund(record()));
    for (const secret of [`0x${'ee'.repeat(32)}`, PAYER, MERCHANT, 'key-digest', 'body-digest', BLOCK_HASH]) expect(json).not.toContain(secret);
  });
});

describe('ledgerTotals', () => {
  const entry = (sequence: number, stage: RefundStage, amountMinor: string) => ({ sequence, stage, amountMinor });

  it('an empty ledger is zero', () => {
    expect(ledgerTotals([])).toEqual({ refunded: 0n, pending: 0n });
  });

  it('counts succeeded as refunded and every unfinished stage as pending; failed counts for nothing', () => {
    expect(
      ledgerTotals([
        entry(1, 'succeeded', '1000000'),
        entry(2, 'succeeded', '500000'),
        entry(3, 'failed', '7000000'),
        entry(4, 'prechecking', '1'),
        entry(5, 'submitting', '10'),
        entry(6, 'submitted', '100'),
        entry(7, 'preconfirmed', '1000'),
        entry(8, 'awaitingExpiry', '10000'),
      ]),
    ).toEqual({ refunded: 1_500_000n, pending: 11_111n });
  });

  it("leaves out a partial capture's release (sequence 0), whatever its stage", () => {
    for (const stage of refundStages) expect(ledgerTotals([entry(0, stage, '2500000')])).toEqual({ refunded: 0n, pending: 0n });
    expect(ledgerTotals([entry(0, 'succeeded', '2500000'), entry(1, 'succeeded', '3000000')])).toEqual({ refunded: 3_000_000n, pending: 0n });
  });

  it('sums beyond the safe integer range exactly', () => {
    const big = (2n ** 60n).toString();
    expect(ledgerTotals([entry(1, 'succeeded', big), entry(2, 'succeeded', big), entry(3, 'submitted', big)])).toEqual({
      refunded: 2n ** 61n,
      pending: 2n ** 60n,
    });
  });
});

describe('publicEvent', () => {
  // The authorization as a workflow records it in an event: its id is filled in when the event leaves.
  const authorization = {
    id: '',
    orderId: 'order-1',
    state: 'captured',
    amount: '12.5',
    amountCaptured: '12.5',
    amountRefunded: '3',
  } as unknown as AuthorizationResource;

  const recordedRefundEvent = (object: RefundRecord | Refund, streamRunId = OTHER_RUN_ID): RecordedEvent =>
    ({
      id: eventId(streamRunId, 2),
      type: 'refund.succeeded',
      createdAt: '2024-01-01T00:00:10.000Z',
      orderId: 'order-1',
      data: { object, authorization },
      sequence: 2,
      recordedAt: '2024-01-01T00:00:11.000Z',
    }) as unknown as RecordedEvent;

  it('a refund event: the record becomes the public refund, the authorization gets its id, memo fields go', () => {
    // The refunds workflow's own run id names its events, not the authorization.
    const event = publicEvent(recordedRefundEvent(record()));
    expect(event).toEqual({
      id: eventId(OTHER_RUN_ID, 2),
      type: 'refund.succeeded',
      createdAt: '2024-01-01T00:00:10.000Z',
      orderId: 'order-1',
      data: { object: publicRefund(record()), authorization: { ...authorization, id: resourceId('order-1', RUN_ID) } },
    });
    expect(Object.keys(event.data.object).sort()).toEqual(REFUND_FIELDS);
  });

  it.each(['refund.created', 'refund.succeeded', 'refund.failed'] as const)('%s events are all turned into the public refund', (type) => {
    const event = publicEvent({ ...recordedRefundEvent(record()), type } as RecordedEvent);
    expect(event.type).toBe(type);
    expect(event.data.object).toEqual(publicRefund(record()));
  });

  it('a refund event that already carries a public refund passes it through', () => {
    const refund = publicRefund(record({ stage: 'failed', failure: { code: 'token_policy_blocked', message: 'the token is paused', at: 'x' } }));
    const event = publicEvent(recordedRefundEvent(refund));
    expect(event.data.object).toEqual(refund);
    expect((event as RefundEvent).data.authorization.id).toBe(refund.authorizationId);
  });

  it('a refund event with an id that is not one of ours still names the authorization', () => {
    const event = publicEvent({ ...recordedRefundEvent(record()), id: 'evt_elsewhere' } as RecordedEvent);
    expect((event as RefundEvent).data.authorization.id).toBe(resourceId('order-1', RUN_ID));
  });

  it('an authorization event: unchanged apart from the resource id its event id names and the capture fields a plain view leaves out', () => {
    const object = { ...authorization, id: '' };
    const recorded = {
      id: eventId(RUN_ID, 7),
      type: 'authorization.captured',
      createdAt: '2024-01-01T00:00:10.000Z',
      orderId: 'order-1',
      data: { object },
      sequence: 7,
      recordedAt: '2024-01-01T00:00:11.000Z',
    } as unknown as RecordedEvent;
    expect(publicEvent(recorded)).toEqual({
      id: eventId(RUN_ID, 7),
      type: 'authorization.captured',
      createdAt: '2024-01-01T00:00:10.000Z',
      orderId: 'order-1',
      data: { object: { ...object, id: resourceId('order-1', RUN_ID), amountCapturable: '0', captures: [], hold: null } },
    });
  });

  it('an authorization event keeps its reason', () => {
    const reason = { code: 'token_policy_blocked', message: 'the token is paused', at: '2024-01-01T00:00:09.000Z' };
    const event = {
      id: eventId(RUN_ID, 3),
      type: 'authorization.capture_failed',
      createdAt: '2024-01-01T00:00:09.000Z',
      orderId: 'order-1',
      data: { object: { ...authorization, id: '' }, reason },
    } as unknown as AuthcapEvent;
    const out = publicEvent(event);
    expect(out.data).toEqual({ object: { ...authorization, id: resourceId('order-1', RUN_ID), amountCapturable: '0', captures: [], hold: null }, reason });
  });

  it('an authorization event whose id is not one of ours is only stripped of the memo fields', () => {
    const recorded = {
      id: 'evt_foreign',
      type: 'authorization.voided',
      createdAt: '2024-01-01T00:00:10.000Z',
      orderId: 'order-1',
      data: { object: { ...authorization, id: 'auth_kept' } },
      sequence: 1,
      recordedAt: '2024-01-01T00:00:11.000Z',
    } as unknown as RecordedEvent;
    const out = publicEvent(recorded);
    expect(out).not.toHaveProperty('sequence');
    expect(out).not.toHaveProperty('recordedAt');
    expect(out.data.object).toEqual({ ...authorization, id: 'auth_kept' });
  });
});
