// domain/ids.ts: resource ids carry the order id and the run id; anything else is not ours.
import { describe, it, expect } from 'vitest';
import { parseResourceId, resourceId, workflowIdForOrder } from '../../../domain/ids.js';

const RUN_ID = '0195f2a4-7c3e-7d61-9a4b-2f1e8c0d5b77';

describe('workflowIdForOrder', () => {
  it('derives the workflow id from the order id', () => {
    expect(workflowIdForOrder('order-42')).toBe('authorization-order-42');
  });
});

describe('resourceId / parseResourceId', () => {
  it.each([
    'order-42',
    'ünïcødé-订单-☕-🧾',
    'shop/orders/2024/42',
    'a.b.c',
    'with spaces and\ttabs',
    '..',
    '.',
    '/',
    'x',
    'base64url-ish_-==',
    'a'.repeat(500),
  ])('round-trips the order id %j', (orderId) => {
    const id = resourceId(orderId, RUN_ID);
    expect(id.startsWith('auth_')).toBe(true);
    expect(id.endsWith(`.${RUN_ID}`)).toBe(true);
    expect(id).not.toMatch(/[\s/+=]/);
    expect(parseResourceId(id)).toEqual({ orderId, workflowId: `authorization-${orderId}`, runId: RUN_ID });
  });

  it('gives different orders different ids, and different runs of one order different ids', () => {
    expect(resourceId('order-1', RUN_ID)).not.toBe(resourceId('order-2', RUN_ID));
    const otherRun = '0195f2a4-7c3e-7d61-9a4b-2f1e8c0d5b78';
    expect(resourceId('order-1', RUN_ID)).not.toBe(resourceId('order-1', otherRun));
    expect(parseResourceId(resourceId('order-1', otherRun))?.runId).toBe(otherRun);
  });

  it('reads an upper-case run id in its canonical lower case (nothing keyed by it may exist under two spellings)', () => {
    expect(parseResourceId(resourceId('order-1', RUN_ID.toUpperCase()))?.runId).toBe(RUN_ID.toLowerCase());
  });

  const encoded = Buffer.from('order-42', 'utf8').toString('base64url');

  it.each([
    ['a foreign id', 'wf_12345'],
    ['a bare workflow id', 'authorization-order-42'],
    ['a different prefix', `authz_${encoded}.${RUN_ID}`],
    ['an upper-case prefix', `AUTH_${encoded}.${RUN_ID}`],
    ['the prefix alone', 'auth_'],
    ['an empty string', ''],
    ['no run id', `auth_${encoded}`],
    ['an empty run id', `auth_${encoded}.`],
    ['no order id', `auth_.${RUN_ID}`],
    ['a run id that is not a uuid', `auth_${encoded}.not-a-run-id`],
    ['a run id that is too short', `auth_${encoded}.${RUN_ID.slice(1)}`],
    ['a run id that is too long', `auth_${encoded}.${RUN_ID}0`],
    ['a run id with non-hex characters', `auth_${encoded}.${RUN_ID.replace(/[a-f]/g, 'z')}`],
  ])('rejects %s → undefined', (_why, id) => {
    expect(parseResourceId(id)).toBeUndefined();
  });
});
