// client/visibilityQuery.ts and the order id rules built on it: a value goes into a visibility query
// only if every Temporal store would match it verbatim, and the library and the HTTP schema agree
// on which order ids those are. (test/integration/orderIdQuoting.test.ts runs them against the server.)
import { describe, expect, it } from 'vitest';
import { AuthcapError } from '../../../domain/errors.js';
import { parseOrderId } from '../../../client/requests.js';
import { orderIdSchema } from '../../../api/schemas.js';
import { quote, unsearchable } from '../../../client/visibilityQuery.js';

const searchable = ['order-42', 'tick`%_(x);--/*y*/ z', 'p_t%', 'ordre-été-订单-🧾', 'x'.repeat(200), 'semi;colon or (paren) and *star*'];

const unsearchableIds: [string, RegExp][] = [
  ['q"1-X', /quotes/],
  ['q\\"1-X', /quotes/],
  ['back\\slash', /quotes .* or backslashes/],
  ["'leading", /quotes/],
  ["trailing'", /quotes/],
  ["o'brien", /quotes/],
  ['tab\there', /control characters/],
  ['nul\u0000', /control characters/],
  ['del\u007F', /control characters/],
  ['lone-\uD800-half', /lone surrogates/],
];

describe('unsearchable', () => {
  it.each(searchable)('accepts %j', (value) => {
    expect(unsearchable(value)).toBeUndefined();
  });

  it.each(unsearchableIds)('refuses %j', (value, why) => {
    expect(unsearchable(value)).toMatch(why);
  });
});

describe('quote', () => {
  it('wraps a searchable value verbatim: the parser would decode nothing in it', () => {
    expect(quote('tick`%_(x)')).toBe('"tick`%_(x)"');
    expect(quote('2025-01-01T00:00:00.000Z')).toBe('"2025-01-01T00:00:00.000Z"');
  });

  it.each(unsearchableIds)('refuses to build a query for %j', (value) => {
    expect(() => quote(value)).toThrow(/visibility query value/);
  });
});

describe('order ids: library and HTTP schema', () => {
  it.each(unsearchableIds)('the library refuses %j with validation_error naming orderId', (value, why) => {
    let caught: unknown;
    try {
      parseOrderId(value);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AuthcapError);
    expect((caught as AuthcapError).code).toBe('validation_error');
    expect((caught as AuthcapError).message).toMatch(why);
    expect((caught as AuthcapError).details).toEqual({ field: 'orderId' });
  });

  it.each(unsearchableIds)('the HTTP schema refuses %j', (value) => {
    expect(orderIdSchema.safeParse(value).success).toBe(false);
  });

  it.each(searchable)('the library accepts %j unchanged', (value) => {
    expect(parseOrderId(value)).toBe(value);
  });

  it('the HTTP schema accepts every printable ASCII id without quotes or backslashes, and the library agrees', () => {
    const printable = Array.from({ length: 0x7f - 0x21 }, (_, i) => String.fromCharCode(0x21 + i));
    for (const c of printable) {
      const id = `a${c}b`;
      const http = orderIdSchema.safeParse(id).success;
      expect(http, id).toBe(!`'"\\`.includes(c));
      expect(http, id).toBe(unsearchable(id) === undefined);
    }
  });
});
