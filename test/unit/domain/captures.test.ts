// A resource's capture fields: a held payment's come from its workflow's view as they are; a plain
// authorization's are derived from its one capture record (its history carries none of them).
import { describe, expect, it } from 'vitest';
import type { AuthorizationView } from '../../../domain/authorization.js';
import { asResource, captureId } from '../../../domain/captures.js';
import { resourceId } from '../../../domain/ids.js';

const RUN = '0b6a3c1e-1111-4a2b-9c3d-123456789abc';
const ID = resourceId('order-7', RUN);
const TX = `0x${'ab'.repeat(32)}` as const;

const view = (extra: Partial<AuthorizationView>): AuthorizationView =>
  ({
    orderId: 'order-7',
    state: 'stored',
    primaryType: 'ReceiveWithAuthorization',
    amount: '12.5',
    amountCaptured: '0',
    amountRefunded: '0',
    authorization: null,
    domain: null,
    typedData: null,
    cancellationTypedData: null,
    capture: null,
    cancellation: null,
    void: null,
    lastError: null,
    history: [],
    ...extra,
  }) as AuthorizationView;

describe('asResource', () => {
  it('says a stored authorization may be captured whole, and lists no capture yet', () => {
    expect(asResource(ID, view({}))).toMatchObject({ id: ID, amountCapturable: '12.5', captures: [], hold: null });
    expect(asResource(ID, view({ state: 'drafted' })).amountCapturable).toBe('0');
  });

  it('lists a plain capture as one capture, named by the attempt, succeeded once captured', () => {
    const capture = {
      transactionHash: TX,
      blockNumber: '9',
      blockHash: TX,
      submittedAt: '2026-01-01T00:00:00.000Z',
      preconfirmedAt: null,
      confirmedAt: '2026-01-01T00:00:03.000Z',
      by: 'authcap' as const,
      amount: '10',
    };
    const captured = asResource(ID, view({ state: 'captured', amountCaptured: '10', capture }));
    expect(captured.amountCapturable).toBe('0');
    expect(captured.captures).toEqual([
      {
        id: captureId(RUN, 1),
        amount: '10',
        final: true,
        status: 'succeeded',
        transactionHash: TX,
        blockNumber: '9',
        failure: null,
        requestedAt: '2026-01-01T00:00:00.000Z',
        succeededAt: '2026-01-01T00:00:03.000Z',
      },
    ]);
    expect(asResource(ID, view({ state: 'capturing', capture: { ...capture, confirmedAt: null } })).captures[0]).toMatchObject({
      status: 'submitted',
      succeededAt: null,
    });
  });

  it("keeps a held payment's own fields as its workflow wrote them", () => {
    const part = {
      id: captureId(RUN, 1),
      amount: '3',
      final: false,
      status: 'succeeded' as const,
      transactionHash: TX,
      blockNumber: '4',
      failure: null,
      requestedAt: 'a',
      succeededAt: 'b',
    };
    const hold = { paymentInfoHash: TX, amountHeld: '10' } as never;
    const resource = asResource(ID, view({ state: 'held', amountCapturable: '7', captures: [part], hold }));
    expect(resource).toMatchObject({ amountCapturable: '7', captures: [part], hold });
  });
});
